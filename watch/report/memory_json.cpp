#include "watch/report/memory_json.h"

#include <cstddef>
#include <utility>
#include <vector>

namespace dlreset::watch {

namespace {

nlohmann::json sample_json(const WatchReport& report, const std::pair<double, MemoryUse>& sample) {
  return {{"t", since_watch_began(report, sample.first)},
          {"pss_bytes", sample.second.pss_bytes},
          {"private_dirty_bytes", sample.second.private_dirty_bytes},
          {"shared_bytes", sample.second.shared_bytes}};
}

nlohmann::json traces_json(const WatchReport& report, const std::vector<WorkerMemoryTrace>& traces) {
  nlohmann::json all = nlohmann::json::array();
  for (const WorkerMemoryTrace& trace : traces) {
    const ProcessRecord& process = report.result.processes[trace.record];
    all.push_back({{"pid", process.pid},
                   {"role", to_string(process.role)},
                   {"owner", trace.owner},
                   {"samples", trace.samples},
                   {"first", sample_json(report, trace.first)},
                   {"peak", sample_json(report, trace.peak)},
                   {"last", sample_json(report, trace.last)}});
  }
  return all;
}

}  // namespace

nlohmann::json memory_json(const WatchReport& report) {
  const MemoryRecord& sampled = report.result.memory;
  const WorkerMemory& memory = report.findings.memory;
  nlohmann::json copies = nlohmann::json::array();
  for (const CopyOnRead& group : memory.copy_on_read) {
    nlohmann::json pids = nlohmann::json::array();
    for (const std::size_t worker : group.workers) {
      pids.push_back(report.result.processes[memory.workers[worker].record].pid);
    }
    copies.push_back({{"owner", group.owner},
                      {"dataset", group.dataset},
                      {"workers", pids},
                      {"private_growth_bytes", group.private_growth_bytes},
                      {"shared_fall_bytes", group.shared_fall_bytes},
                      {"sentence", group.sentence}});
  }
  nlohmann::json peak_live;
  if (memory.peak_live_workers > 0) {
    peak_live = {{"bytes", memory.peak_live_bytes},
                 {"t", since_watch_began(report, memory.peak_live_s)},
                 {"workers", memory.peak_live_workers}};
  }
  return {{"interval_s", sampled.interval_s > 0 ? nlohmann::json(sampled.interval_s) : nlohmann::json()},
          {"ticks", sampled.ticks.size()},
          {"reads", sampled.reads},
          {"read_cpu_s", sampled.read_cpu_s},
          {"stretched_ticks", sampled.stretched},
          {"workers", traces_json(report, memory.workers)},
          {"training", traces_json(report, memory.training)},
          {"peak_live_workers", peak_live},
          {"copy_on_read", copies}};
}

}  // namespace dlreset::watch
