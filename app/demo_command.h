// `dlreset demo`: the reporter's investigation of issue #10389, in six steps, for workshops.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "harness/cli/accepted_values.h"
#include "harness/cli/command_line.h"
#include "harness/data/core/data_loader_options.h"

#ifndef DLRESET_DATA_DIR
#define DLRESET_DATA_DIR "/usr/share/datasets/fashion-mnist"
#endif

namespace dlreset::app {

enum class ColorMode { automatic, always, never };

/// The demo's embedded defaults keep the whole walk-through under two minutes on a 2-core
/// machine while every step still shows its point.
struct DemoOptions {
  bool interactive = false;  ///< Wait for Enter between steps.
  int step = 0;              ///< 1..6 runs that step alone; 0 runs all six.
  ColorMode color = ColorMode::automatic;
  int workers = 2;
  data::StartMethod start_method = data::StartMethod::fork;
  int epochs = 3;
  std::int64_t limit_train_batches = 30;
  std::int64_t limit_val_batches = 5;
  std::string data_dir = DLRESET_DATA_DIR;
};

inline constexpr int kDemoSteps = 6;

/// The demo's choices as the command line gives them, as text, until finish_demo_options reads
/// them into DemoOptions.
struct DemoFlags {
  std::string color = "auto";
  std::string method;  ///< add_demo_command sets the default, DemoOptions' start method.
};

using DemoCommandLine = cli::CommandLine<DemoOptions, DemoFlags>;

/// Adds `command` to `parent` and defines its options, each with its check and words in
/// `command.accepted`. --color and --start-method are read as text into `command.flags`, for
/// finish_demo_options.
void add_demo_command(CLI::App& parent, DemoCommandLine& command);

/// The demo's choices given as text, into `demo.options` (the parser checked them already).
void finish_demo_options(DemoCommandLine& demo);

/// Runs the demo, writing to stdout; returns the exit status.
int demo_command(const DemoOptions& options);

}  // namespace dlreset::app
