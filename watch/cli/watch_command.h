// `dlreset watch` (and `dlreset-watch`, the same command without LibTorch): is a training program
// killing its DataLoader workers? Runs it (or attaches to it) under the process-tree watcher, with
// the Python hook in its Python processes, and says: respawns and the stack behind them, the peak
// of live workers, leaks, extra iterators, passes that replay an order; gates turn each into an
// exit status.
#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/cli/accepted_values.h"
#include "harness/cli/command_line.h"
#include "watch/analysis/checks/check_spec.h"
#include "watch/analysis/checks/gate_verdict.h"
#include "watch/analysis/watch_report.h"

namespace dlreset::watch {

/// The one-line description of the command, for --help and the subcommand list.
inline constexpr const char* kWatchDescription =
    "Run a training program (watch [options] -- COMMAND [ARGS...]) or attach to one (--pid N), follow "
    "its process tree and report whether its DataLoader workers are replaced, leaked or left idle, "
    "with the Python stack that did it";

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

/// The flags that fold into WatchCommandOptions once parsed.
struct WatchFlags {
  bool expect_clean = false;
  bool no_live = false;
  bool no_python_trace = false;
};

using WatchCommandLine = cli::CommandLine<WatchCommandOptions, WatchFlags>;

/// Holds every gate of `options` against its check: writes a line to `out` for each that failed
/// or could not see what it holds (then `failed` is set), and returns the gates as JSON.
nlohmann::json hold_gates(const WatchCommandOptions& options, const WatchReport& report, std::ostream& out,
                          bool& failed);

/// Defines watch's options on `command.app` (a subcommand of dlreset, or dlreset-watch's own
/// app), each with its check and words in `command.accepted`. `usage` is how the examples call
/// it ("dlreset watch", "dlreset-watch").
void add_watch_options(WatchCommandLine& command, const std::string& usage);

/// Defines the gates' options on `app`: each check's --expect-* flag, --expect-clean (into
/// `expect_clean`) and each check's --max-* flag, into `gates` (one a check, unset_gates()).
void add_gate_options(CLI::App& app, cli::AcceptedValues& accepted, std::vector<Gate>& gates, bool& expect_clean);

/// Sets to 0 the gates that their --expect-* flag, or --expect-clean, asked for, after a parse.
void finish_gates(std::vector<Gate>& gates, bool expect_clean);

/// Adds `watch` to dlreset's `parent`, with add_watch_options.
void add_watch_command(CLI::App& parent, WatchCommandLine& watch);

/// The command after the first lone "--" at or after argv[first], which is taken off the
/// arguments (argc is cut there) so that the parser never sees it.
std::vector<std::string> split_command(int& argc, char** argv, int first);

/// Completes the options after a parse: the command, the gates, the switches. Bad input gets a
/// line on stderr (prefixed by `prefix`) and the exit status cli::kExitUsage, returned; nothing when all is well.
std::optional<int> finish_watch_options(WatchCommandLine& watch, const std::vector<std::string>& command_after_dashes,
                                        const std::string& prefix);

/// The closing sections of dlreset-watch(1) (EXIT STATUS, ENVIRONMENT, FILES, SEE ALSO).
std::string watch_man_page_sections();

/// Watches and prints the summary on stderr. Exit status: the program's own when it failed (128
/// + N for a signal, 127 for a command not found, 126 for one that cannot run; its own 99 is
/// reported as 1); 124 when it hung and the watch ended it; 99 when it succeeded and a gate
/// failed; 1 when a report could not be written; 2 for bad input.
int watch_command(const WatchCommandOptions& options);

}  // namespace dlreset::watch
