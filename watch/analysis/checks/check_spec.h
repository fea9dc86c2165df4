// One check of the watch, as the table (watch/analysis/checks/checks.h) describes it: its name,
// its gate flag and help, its finder, its sentences in the summary and the words of its failed
// gate. Everything that reports the checks (the findings, the summary, the JSON, the gates, the
// command's options) goes through the table, so a check is its own file and its row.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "watch/analysis/findings.h"
#include "watch/analysis/watch_report.h"

namespace dlreset::watch {

/// What a check's gate holds against its limit.
enum class GateLimit {
  count,      ///< The check's count: an integer from 0.
  fraction,   ///< The check's measure (Check::measure), a fraction from 0 to 1.
  seconds,    ///< The check's measure, in seconds from 0.
  mebibytes,  ///< The check's measure, in MiB: an integer from 0.
};

/// How the command line names a check and its gate.
struct CheckFlags {
  const char* name = "";       ///< The check's name in the report and the JSON: "late_set_epoch".
  const char* gate_flag = "";  ///< Its gate: "--max-late-set-epoch".
  const char* help = "";       ///< The gate flag's --help.
  /// What --expect-clean calls one finding of it ("late set_epoch"); null: --expect-clean leaves
  /// its gate alone.
  const char* expect_clean = nullptr;
  /// A flag of its own that sets its gate to 0 ("--expect-persistent"), and its --help; null:
  /// none.
  const char* expect_flag = nullptr;
  const char* expect_help = nullptr;
  GateLimit limit = GateLimit::count;
};

/// What a check does with a watch's record, and says of it.
struct CheckSteps {
  /// Counts it into `check`; it may fill the facts of `findings` that the rest of the report
  /// shows (the peak, the causes of respawns).
  void (*find)(const CheckInput& input, Check& check, Findings& findings) = nullptr;
  /// Its lines among the summary's findings (each ending in '\n'); null: none.
  std::string (*section)(const WatchReport& report, const Check& check) = nullptr;
  /// Its tracebacks, after every check's lines; null: none.
  std::string (*tracebacks)(const WatchReport& report, const Check& check) = nullptr;
  /// Its sentence after the verdict, said where its count is above 0; null: none.
  std::string (*verdict)(const WatchReport& report, const Check& check) = nullptr;
  /// What its failed gate's line says the count was: "2 workers were leaked".
  std::string (*gate_words)(const WatchReport& report, const Check& check) = nullptr;
  /// Why the count was that high, after the failed gate's line; null or "": no more to say.
  std::string (*gate_cause)(const WatchReport& report) = nullptr;
};

/// One row of the table: a check's flags, its steps, and whether it reads the Python hook's
/// events (without the hook it is not seen). Each check's file writes its row as one aggregate,
/// `{{name, gate flag, help, ...}, {find, section, tracebacks, verdict, gate_words, gate_cause}}`,
/// null where a check has no such step, so a row reads in one look.
struct CheckSpec {
  CheckFlags flags;
  CheckSteps steps;
  bool needs_hook = false;
};

/// Whether `record` was alive at `time_s` (started at or before it, not ended by it).
bool alive_at(const ProcessRecord& record, double time_s);

/// "  2 leaked workers:\n" and a line a detail; "" where the count is 0.
std::string details_section(const Check& check, const char* one, const char* many);

/// One traceback for each distinct stack among `events`, each headed by `heading` of its group
/// (with " (N times)" where the stack recurs).
std::string stack_tracebacks(const WatchReport& report, const std::vector<std::size_t>& events,
                             std::string (*heading)(const WatchReport& report, const StackGroup& group));

}  // namespace dlreset::watch
