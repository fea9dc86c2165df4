#include "watch/cli/watch_options.h"

#include <fmt/format.h>

#include <string>

#include "watch/analysis/checks/checks.h"

namespace dlreset::watch {

std::vector<Gate> unset_gates() {
  std::vector<Gate> gates;
  for (const CheckSpec& spec : checks()) gates.push_back(Gate{&spec});
  return gates;
}

nlohmann::json hold_gates(const WatchCommandOptions& options, const WatchReport& report, std::ostream& out,
                          bool& failed) {
  const auto check_of = [&](const CheckSpec& spec) -> const Check& { return report.findings.check(spec.flags.name); };
  const auto say_failed = [&](const Gate& gate, const Check& check, const GateVerdict& verdict) {
    const CheckSpec& spec = *gate.check;
    if (!verdict.seen) {
      out << fmt::format("{}: {} cannot be checked: {}.\n", options.program_name, spec.flags.gate_flag,
                         check.unseen_why.empty() ? "the Python hook was " + report.python.hook : check.unseen_why);
      return;
    }
    const std::string cause = spec.steps.gate_cause != nullptr ? spec.steps.gate_cause(report) : "";
    out << fmt::format("{}: {}, more than the {:g}{} allowed ({}){}.\n", options.program_name,
                       spec.steps.gate_words(report, check), gate.limit,
                       spec.flags.limit == GateLimit::mebibytes ? " MiB" : "",
                       gate.set_by != nullptr ? gate.set_by : spec.flags.gate_flag, cause.empty() ? "" : ": " + cause);
  };
  return hold_set_gates(options.gates, check_of, say_failed, failed);
}

}  // namespace dlreset::watch
