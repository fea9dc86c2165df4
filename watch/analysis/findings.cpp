#include "watch/analysis/findings.h"

#include <fmt/format.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "watch/analysis/checks/checks.h"

namespace dlreset::watch {

std::string overlap_cause(const LivePeak& peak) {
  if (peak.overlapping.empty()) return "";
  std::string loaders;
  for (std::size_t i = 0; i < peak.overlapping.size(); ++i) {
    loaders += (i == 0 ? "" : i + 1 == peak.overlapping.size() ? " and of " : ", of ") + peak.overlapping[i];
  }
  return fmt::format("the next pass of {} (not persistent) started its workers before the last pass's workers had "
                     "ended",
                     loaders);
}

std::vector<Check> unfound_checks() {
  std::vector<Check> unfound;
  for (const CheckSpec& spec : checks()) unfound.emplace_back(spec.flags.name);
  return unfound;
}

const Check& Findings::check(const std::string& name) const {
  for (const Check& check : checks) {
    if (check.name == name) return check;
  }
  throw std::logic_error("The findings have no check named '" + name +
                         "'; name one of the table in watch/analysis/checks/checks.h.");
}

Findings analyse_findings(const WatchResult& result, const GenerationReport& generations, const PythonView& python) {
  Findings findings;
  const CheckInput input{result, generations, python};
  // Without the hook the Python checks see nothing, which is all there is to see where no Python
  // process ran.
  const bool hook = python.hook == "on";
  const std::vector<CheckSpec>& table = checks();
  for (std::size_t i = 0; i < table.size(); ++i) {
    Check& check = findings.checks[i];
    if (table[i].needs_hook) check.seen = hook || python.processes.empty();
    if (!table[i].needs_hook || hook) table[i].steps.find(input, check, findings);
  }
  return findings;
}

}  // namespace dlreset::watch
