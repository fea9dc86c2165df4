// What a watch found: the processes classified, the worker generations and respawns, the hook's
// events set against them, and the checks. The report/ folder says it in words and as JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "watch/analysis/findings.h"
#include "watch/analysis/generations.h"
#include "watch/analysis/python_view.h"
#include "watch/tree/watcher.h"

namespace dlreset::watch {

/// A watch's result with its workers classified and grouped, the hook's events set against
/// them, and the checks.
struct WatchReport {
  WatchResult result;  ///< Its hook events moved to `python`.
  GenerationReport generations;
  PythonView python;
  Findings findings;
  std::vector<std::string> command;  ///< What ran (empty when attached).
  std::string epoch_pattern;         ///< The --epoch-regex text, empty without one.
  /// The status the program ended with, as a shell gives it, where known.
  std::optional<int> program_status;
  /// How early a worker's start may be dated (GenerationOptions::start_uncertainty_s).
  double start_uncertainty_s = 0.0;
  /// How the summary names the watcher: "dlreset watch", or "dlreset-watch".
  std::string program = "dlreset watch";
};

/// How early a worker start may be dated in `mode` (GenerationOptions::start_uncertainty_s).
double start_uncertainty_s(WatchMode mode, int poll_ms);

/// Classifies the processes and finds the generations (the start uncertainty follows the mode).
WatchReport analyse_watch(WatchResult result, std::vector<std::string> command, std::string epoch_pattern,
                          double generation_window_s);

/// The epoch of a time among epoch marks: -1 before the first, else the index of the last mark
/// at or before it.
int epoch_of(const std::vector<double>& epoch_marks_s, double time_s);

/// The epoch of a time: -1 before the first epoch line (or without a pattern), else the number
/// of the last epoch line at or before it, from 0.
int epoch_at(const WatchReport& report, double time_s);

/// The epoch a worker start belongs to. A start found by polling is dated up to one interval
/// before it happened, and the epoch line that came just before it may be read in that interval.
int epoch_of_start(const WatchReport& report, double start_s);

/// Seconds since the watch began: how every time of the report is given.
double since_watch_began(const WatchReport& report, double time_s);

/// The command that ran (or the attached process's command line), cut to 80 characters.
std::string what_ran(const WatchReport& report);

}  // namespace dlreset::watch
