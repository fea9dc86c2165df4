// What `dlreset run` shows and writes around a fit, the same in one process and on rank 0 of a
// multi-rank job: the banner, the progress bar and the profiler, and the report at the end.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

#include "app/fashion_fit.h"
#include "app/progress_bar.h"
#include "app/run_options.h"
#include "harness/profiler/simple_profiler.h"

namespace dlreset::app {

/// Owns the profiler and the progress bar that the fit's hooks point at, so it must outlive the
/// fit; neither copied nor moved, since those hooks hold its address.
class RunOutput {
 public:
  /// `shows`: whether this process prints the banner and draws the bar. In a job only rank 0
  /// does, so that N ranks do not print N banners and fight over one terminal line.
  RunOutput(const RunOptions& options, bool shows);
  ~RunOutput() = default;
  RunOutput(const RunOutput&) = delete;
  RunOutput& operator=(const RunOutput&) = delete;

  /// The hooks of a fit: the profiler with --profiler, the bar with --progress on a terminal, and
  /// the banner once the device is known, naming the processes that fit (`workers`: "2 workers",
  /// "2 ranks × 1 worker"). Nothing is printed on stdout while JSON goes there.
  FitHooks hooks(std::string workers);

  /// Writes --json and --events, then prints `summary` and the profiler's report unless JSON
  /// goes to stdout. Each part is made only when it is written: a report nobody asked for is
  /// never built.
  void report(const std::function<nlohmann::json()>& json, const std::function<nlohmann::json()>& events,
              const std::function<std::string()>& summary);

 private:
  /// --json - or --events -: stdout carries that one JSON document and nothing else.
  bool json_to_stdout() const;

  const RunOptions& options_;
  bool shows_;
  profiler::SimpleProfiler profiler_;
  ProgressBar progress_bar_;
};

}  // namespace dlreset::app
