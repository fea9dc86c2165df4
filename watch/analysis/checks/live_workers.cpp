// The live-workers check: the most workers alive at once, all ranks together, and whose they
// were then.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "watch/analysis/checks/checks.h"

namespace dlreset::watch {

namespace {

/// --max-live-workers's --help.
constexpr const char* kHelp =
    "Fail if more workers than this were alive at once (all ranks together; a non-persistent loader's "
    "next pass beside its last counts both)";

std::string owner_of(const PythonView& python, const ProcessRecord& worker) {
  if (const LoaderView* loader = python.loader_of_worker(worker.pid)) return loader->short_name();
  return fmt::format("workers of pid {}", worker.parent);
}

void find(const CheckInput& input, Check& check, Findings& findings) {
  const WatchResult& result = input.result;
  const PythonView& python = input.python;
  std::vector<std::pair<double, int>> changes;
  for (const ProcessRecord& record : result.processes) {
    if (record.role != ProcessRole::worker) continue;
    changes.emplace_back(record.start_s, +1);
    if (record.end_s) changes.emplace_back(*record.end_s, -1);
  }
  // Ends before starts at the same instant: a worker replaced at once is not two alive.
  std::sort(changes.begin(), changes.end());
  int live = 0;
  for (const auto& [time_s, change] : changes) {
    live += change;
    if (live > findings.peak.workers) {
      findings.peak.workers = live;
      findings.peak.time_s = time_s;
    }
  }
  check.count = findings.peak.workers;
  if (findings.peak.workers == 0) return;
  std::map<std::string, int> owners;
  std::vector<std::string> order;
  for (const ProcessRecord& record : result.processes) {
    if (record.role != ProcessRole::worker || !alive_at(record, findings.peak.time_s)) continue;
    const std::string owner = owner_of(python, record);
    if (owners[owner]++ == 0) order.push_back(owner);
  }
  for (const std::string& owner : order) findings.peak.by_owner.emplace_back(owner, owners[owner]);
  // A loader without persistent workers whose workers of two iterators are alive together.
  std::map<const LoaderView*, std::set<std::string>> passes;
  for (const ProcessRecord& record : result.processes) {
    if (record.role != ProcessRole::worker || !alive_at(record, findings.peak.time_s)) continue;
    const LoaderView* loader = python.loader_of_worker(record.pid);
    if (loader != nullptr && !loader->settings.persistent) passes[loader].insert(record.iterator_key);
  }
  for (const LoaderView& loader : python.loaders) {
    if (passes.count(&loader) != 0 && passes[&loader].size() > 1) findings.peak.overlapping.push_back(loader.key);
  }
}

std::string gate_words(const WatchReport& report, const Check& check) {
  return fmt::format("{} workers were alive at once (at {:.2f} s)", check.count,
                     report.findings.peak.time_s - report.result.origin_s);
}

/// The peak of overlapping passes is torch's lazy shutdown, not a leak: the failed gate says so.
std::string gate_cause(const WatchReport& report) { return overlap_cause(report.findings.peak); }

}  // namespace

CheckSpec live_workers_check() {
  return {{"live_workers", "--max-live-workers", kHelp}, {find, nullptr, nullptr, nullptr, gate_words, gate_cause}};
}

}  // namespace dlreset::watch
