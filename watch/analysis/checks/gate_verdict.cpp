#include "watch/analysis/checks/gate_verdict.h"

namespace dlreset::watch {

GateVerdict judge_gate(const CheckSpec& spec, double limit, long count, const std::optional<double>& measure,
                       bool seen) {
  GateVerdict verdict;
  verdict.counted = spec.flags.limit == GateLimit::count;
  verdict.seen = seen && (verdict.counted || measure.has_value());
  verdict.count = count;
  verdict.measure = measure;
  verdict.value = verdict.counted ? static_cast<double>(count) : measure.value_or(0.0);
  verdict.passed = verdict.seen && verdict.value <= limit;
  return verdict;
}

nlohmann::json gate_entry(const CheckSpec& spec, double limit, const GateVerdict& verdict) {
  nlohmann::json entry = {{"flag", spec.flags.gate_flag}, {"check", spec.flags.name}};
  const bool whole = verdict.counted || spec.flags.limit == GateLimit::mebibytes;
  entry["limit"] = whole ? nlohmann::json(static_cast<long>(limit)) : nlohmann::json(limit);
  entry["count"] = verdict.count;
  if (!verdict.counted) entry["measure"] = verdict.measure ? nlohmann::json(*verdict.measure) : nlohmann::json();
  entry["seen"] = verdict.seen;
  entry["passed"] = verdict.passed;
  return entry;
}

}  // namespace dlreset::watch
