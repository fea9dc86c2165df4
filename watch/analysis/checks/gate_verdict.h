// A gate held against one check: the rule both commands share (the watch of one program and the
// merge of a job's reports), so a gate passes or fails, and reads in the JSON, the same in both.
// Each command keeps only the words of its failed gate's line.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

#include "watch/analysis/checks/check_spec.h"

namespace dlreset::watch {

/// What a gate made of a check's count or measure.
struct GateVerdict {
  /// The gate holds the check's count (GateLimit::count), not its measure.
  bool counted = false;
  /// The check was seen, and a measured gate measured something: a measured gate with nothing
  /// measured has not seen what it holds, and fails as unseen rather than passing on a 0.
  bool seen = false;
  long count = 0;                 ///< The check's count, which every gate's entry shows.
  std::optional<double> measure;  ///< The check's measure; empty where nothing was measured.
  /// What the gate held against its limit: the count, or the measure (0 where none).
  double value = 0.0;
  bool passed = false;  ///< Seen, and `value` at or below the limit.
};

/// Holds `spec`'s gate at `limit` (0 or more) against the check's `count`, `measure` and whether
/// it was `seen`.
GateVerdict judge_gate(const CheckSpec& spec, double limit, long count, const std::optional<double>& measure,
                       bool seen);

/// The gate's entry in the report's `gates`: flag, check, limit (an integer for a counted
/// gate), count, measure (measured gates only; null where nothing was measured), seen and
/// passed.
nlohmann::json gate_entry(const CheckSpec& spec, double limit, const GateVerdict& verdict);

}  // namespace dlreset::watch
