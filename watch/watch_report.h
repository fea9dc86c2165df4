// What a watch found, in words and as JSON: the processes, the worker generations, the respawns
// and the one sentence that answers "is my loop killing its workers?".
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "watch/findings.h"
#include "watch/generations.h"
#include "watch/python_view.h"
#include "watch/watcher.h"

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

/// The verdict on respawns in one sentence, e.g. "2 workers were replaced 9 times, every 3.1 s:
/// the loop is not keeping persistent workers."; the findings beyond respawns follow it in the
/// summary (finding_verdicts).
std::string verdict(const WatchReport& report);

/// The summary printed at the end of a watch (several lines, each ending in '\n').
std::string summary_text(const WatchReport& report);

/// `--json`: schema "dlreset.watch", version 2 (docs/watch.md, "JSON").
nlohmann::json report_json(const WatchReport& report);

/// `--events`: the workers' lives in the timeline format of `dlreset run --events`, so
/// plots/plot_timeline.py draws them; each parent's workers form one group of lanes.
nlohmann::json events_json(const WatchReport& report);

/// The epoch of a time among epoch marks: -1 before the first, else the index of the last mark
/// at or before it.
int epoch_of(const std::vector<double>& epoch_marks_s, double time_s);

/// The epoch of a time: -1 before the first epoch line (or without a pattern), else the number
/// of the last epoch line at or before it, from 0.
int epoch_at(const WatchReport& report, double time_s);

}  // namespace dlreset::watch
