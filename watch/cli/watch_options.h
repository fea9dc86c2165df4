// The settings of a watch and its gates, apart from the command line that fills them: what the
// live lines, the merge and the tests read, without CLI11's headers (watch_command.h), which
// take seconds of each file's compile to parse.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "watch/analysis/checks/check_spec.h"
#include "watch/analysis/checks/gate_verdict.h"
#include "watch/analysis/watch_report.h"

namespace dlreset::watch {

/// The exit status of a watch whose program succeeded and whose gate failed. A program that
/// itself exits with it is reported as 1, so this status always means a gate.
inline constexpr int kExitGateFailed = 99;

/// The exit status of a watch that ended a hung program (--hang-timeout, --on-hang stop), as
/// timeout(1) ends a command that ran too long. With --hang-timeout, a program that itself exits
/// with it is reported as 1, so this status always means a hang.
inline constexpr int kExitHung = 124;

/// A gate: a check's count (or its measure, CheckFlags::limit) may be at most `limit`; -1: no
/// gate.
struct Gate {
  const CheckSpec* check = nullptr;  ///< Its row of the table: its name and flag ("--max-respawns").
  double limit = -1;
  const char* set_by = nullptr;  ///< The flag that set the limit, where not the check's own ("--expect-clean").
  bool expected = false;         ///< The check's own --expect-* flag was given (CheckSpec::expect_flag).
};

/// A gate for each check of the table, in its order, none set.
std::vector<Gate> unset_gates();

/// Holds each set gate of `gates` against its check, `check_of(spec)` (a watch's Check, or a
/// job's MergedCheck: both have a count, a measure and whether they were seen), by judge_gate
/// and gate_entry, so that both commands pass, fail and record a gate alike.
/// `say_failed(gate, check, verdict)` writes a failed gate's line in the command's own words;
/// `failed` is then set. Returns the gates' JSON entries.
template <typename CheckOf, typename SayFailed>
nlohmann::json hold_set_gates(const std::vector<Gate>& gates, CheckOf check_of, SayFailed say_failed, bool& failed) {
  nlohmann::json entries = nlohmann::json::array();
  for (const Gate& gate : gates) {
    if (gate.limit < 0) continue;
    const auto& check = check_of(*gate.check);
    const GateVerdict verdict = judge_gate(*gate.check, gate.limit, check.count, check.measure, check.seen);
    entries.push_back(gate_entry(*gate.check, gate.limit, verdict));
    if (verdict.passed) continue;
    failed = true;
    say_failed(gate, check, verdict);
  }
  return entries;
}

/// The settings of `dlreset watch`, with the defaults its --help shows.
struct WatchCommandOptions {
  std::vector<std::string> command;  ///< Run this, or
  int pid = 0;                       ///< attach to this process.
  std::string mode = "auto";         ///< auto, connector or poll.
  int poll_ms = 5;
  double memory_interval_s = 1.0;  ///< --memory-interval; 0: memory is not sampled.
  std::string epoch_regex;         ///< Empty: the output is not read.
  std::string json_path;
  std::string events_path;
  /// The gates, one a check, in the order the summary names them. A check's --expect-* flag
  /// sets its gate to 0; --expect-clean sets those of the checks it names.
  std::vector<Gate> gates = unset_gates();
  int generation_window_ms = 1000;
  double hang_timeout_s = 0.0;                 ///< --hang-timeout; 0: no hang watch.
  std::string on_hang = "stop";                ///< --on-hang: stop or report.
  bool live = true;                            ///< A line on stderr at each respawn and reset, as it is found.
  bool python_trace = true;                    ///< Put the Python hook in the program's Python processes.
  std::string program_name = "dlreset watch";  ///< How messages name the command.
};

/// Holds every gate of `options` against its check: writes a line to `out` for each that failed
/// or could not see what it holds (then `failed` is set), and returns the gates as JSON.
nlohmann::json hold_gates(const WatchCommandOptions& options, const WatchReport& report, std::ostream& out,
                          bool& failed);

}  // namespace dlreset::watch
