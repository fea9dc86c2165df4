// One subcommand's part of the command line while it is parsed.
#pragma once

#include <CLI/CLI.hpp>

#include "harness/cli/accepted_values.h"

namespace dlreset::cli {

/// What a subcommand's setup function (add_run_command, add_demo_command, add_watch_command)
/// fills for it: the options it runs with, the flags read as text until they fold into the
/// options, the values each option accepts (which a usage error names), and its CLI11 app,
/// which says whether it was the one given.
template <typename Options, typename Flags>
struct CommandLine {
  Options options;
  Flags flags;
  AcceptedValues accepted;
  CLI::App* app = nullptr;
};

}  // namespace dlreset::cli
