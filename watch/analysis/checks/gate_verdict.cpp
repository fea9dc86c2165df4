#include "watch/analysis/checks/gate_verdict.h"

namespace dlreset::watch {

GateVerdict judge_gate(const CheckSpec& spec, double limit, long count, const std::optional<double>& measure,
                       bool seen) {
  GateVerdict verdict;
  verdict.counted = spec.flags.limit == GateLimit::count;
  verdict.seen = seen && (verdict.counted || measure.has_value());
  verdict.value = verdict.counted ? static_cast<double>(count) : measure.value_or(0.0);
  verdict.passed = verdict.seen && verdict.value <= limit;
  nlohmann::json& entry = verdict.entry;
  entry = {{"flag", spec.flags.gate_flag}, {"check", spec.flags.name}};
  entry["limit"] = verdict.counted ? nlohmann::json(static_cast<long>(limit)) : nlohmann::json(limit);
  entry["count"] = count;
  if (!verdict.counted) entry["measure"] = measure ? nlohmann::json(*measure) : nlohmann::json();
  entry["seen"] = verdict.seen;
  entry["passed"] = verdict.passed;
  return verdict;
}

}  // namespace dlreset::watch
