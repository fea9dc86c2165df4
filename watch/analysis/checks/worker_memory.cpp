// The memory checks, two rows on the watch's memory samples (watch/tree/memory_sampler.h): the
// largest worker's PSS (worker_memory, with the most the workers alive together held), and the
// workers that copied what they read of a dataset they inherited by fork (copy_on_read: their
// private memory grew while their shared memory fell, pytorch#13246). The first row's finder
// gathers each worker's samples into Findings::memory, the second reads them.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "watch/analysis/checks/checks.h"
#include "watch/analysis/wording.h"

namespace dlreset::watch {

namespace {

/// --max-worker-memory's --help.
constexpr const char* kHelp = "Fail if any one worker's memory (its PSS, sampled every --memory-interval seconds) "
                              "passed this many MiB; a worker that "
                              "lived less than the interval is not sampled";

/// --max-copy-on-read's --help.
constexpr const char* kCopyHelp =
    "Fail if more workers than this copied what they read: their private memory grew while their shared memory "
    "fell, as reading Python objects a fork worker inherited touches their reference counts";

constexpr double kMiB = 1024.0 * 1024.0;

/// The least growth of a worker's private memory, first sample to largest, that is a copy on
/// read: a worker's own batches and imports make tens of MiB private too. Calibrated on
/// tests/watch/, whose clean programs must give none.
constexpr std::uint64_t kMinGrowthBytes = 64ull << 20;

/// How much of that growth its shared memory must have lost: what a worker copied it no longer
/// shares. A worker that only allocates grows without losing any.
constexpr double kMinSharedFall = 0.5;

/// The record of `pid` alive at `time_s`, an index into `processes`; empty where none was.
std::optional<std::size_t> record_at(const std::multimap<pid_t, std::size_t>& by_pid,
                                     const std::vector<ProcessRecord>& processes, pid_t pid, double time_s) {
  const auto [begin, end] = by_pid.equal_range(pid);
  for (auto it = begin; it != end; ++it) {
    if (alive_at(processes[it->second], time_s)) return it->second;
  }
  return std::nullopt;
}

/// "L1 of pid 812", or "pid 812", its parent, where the hook did not name its loader.
std::string owner_of(const PythonView& python, const ProcessRecord& worker) {
  if (const LoaderView* loader = python.loader_of_worker(worker.pid)) return loader->short_name();
  return fmt::format("pid {}", worker.parent);
}

/// Each worker's samples, and the workers' sum at each tick.
void find(const CheckInput& input, Check& check, Findings& findings) {
  const WatchResult& result = input.result;
  WorkerMemory& memory = findings.memory;
  if (result.memory.interval_s <= 0.0) {
    check.seen = false;
    check.unseen_why = "memory was not sampled (--memory-interval 0)";
    return;
  }
  std::multimap<pid_t, std::size_t> by_pid;  // the workers and training processes
  bool any_worker = false;
  for (std::size_t i = 0; i < result.processes.size(); ++i) {
    const ProcessRole role = result.processes[i].role;
    any_worker = any_worker || role == ProcessRole::worker;
    if (role == ProcessRole::worker || role == ProcessRole::root || role == ProcessRole::program) {
      by_pid.emplace(result.processes[i].pid, i);
    }
  }
  std::map<std::size_t, WorkerMemoryTrace> traces;  // by record: the order the processes started in
  for (const MemoryTick& tick : result.memory.ticks) {
    std::uint64_t sum = 0;
    int workers = 0;
    for (const auto& [pid, use] : tick.members) {
      const std::optional<std::size_t> record = record_at(by_pid, result.processes, pid, tick.time_s);
      if (!record) continue;
      const bool worker = result.processes[*record].role == ProcessRole::worker;
      WorkerMemoryTrace& trace = traces[*record];
      if (trace.samples++ == 0) {
        trace.record = *record;
        if (worker) trace.owner = owner_of(input.python, result.processes[*record]);
        trace.first = trace.peak = {tick.time_s, use};
      }
      trace.last = {tick.time_s, use};
      if (use.pss_bytes > trace.peak.second.pss_bytes) trace.peak = {tick.time_s, use};
      if (!worker) continue;
      sum += use.pss_bytes;
      ++workers;
    }
    if (tick.whole && sum > memory.peak_live_bytes) {
      memory.peak_live_bytes = sum;
      memory.peak_live_s = tick.time_s;
      memory.peak_live_workers = workers;
    }
  }
  for (auto& [record, trace] : traces) {
    const bool worker = result.processes[record].role == ProcessRole::worker;
    (worker ? memory.workers : memory.training).push_back(std::move(trace));
  }
  for (std::size_t i = 0; i < memory.workers.size(); ++i) {
    if (!memory.largest ||
        memory.workers[i].peak.second.pss_bytes > memory.workers[*memory.largest].peak.second.pss_bytes) {
      memory.largest = i;
    }
  }
  check.count = static_cast<long>(memory.workers.size());
  if (memory.largest) {
    check.measure = static_cast<double>(memory.workers[*memory.largest].peak.second.pss_bytes) / kMiB;
  } else if (!any_worker) {
    check.measure = 0.0;  // no worker: none held anything
  } else {
    check.seen = false;
    check.unseen_why =
        fmt::format("no worker lived long enough to be sampled (every {})", seconds(result.memory.interval_s));
  }
}

std::string section(const WatchReport& report, const Check& /*check*/) {
  const WorkerMemory& memory = report.findings.memory;
  if (!memory.largest) return "";
  const WorkerMemoryTrace& largest = memory.workers[*memory.largest];
  const MemoryRecord& sampled = report.result.memory;
  // Where reads took too long, ticks came less often than the interval: say how often they came,
  // where that was a tenth later or more (a young worker's first read may put one tick off a little).
  std::string how = "sampled every " + seconds(sampled.interval_s);
  if (sampled.stretched > 0) {
    std::vector<double> whole;
    for (const MemoryTick& tick : sampled.ticks) {
      if (tick.whole) whole.push_back(tick.time_s);
    }
    const double mean_s =
        whole.size() > 1 ? (whole.back() - whole.front()) / static_cast<double>(whole.size() - 1) : 0.0;
    if (mean_s > 1.1 * sampled.interval_s) {
      how = fmt::format("sampled every {} on average, not {}, to keep the reads under 0.4% of a core", seconds(mean_s),
                        seconds(sampled.interval_s));
    }
  }
  std::string text = fmt::format("  worker memory (PSS, {}): the largest worker held {} (pid {}, {})", how,
                                 size_words(largest.peak.second.pss_bytes), report.result.processes[largest.record].pid,
                                 largest.owner);
  // Workers that lived less than the interval had only their first read, at their start: no
  // whole tick saw them together.
  if (memory.peak_live_workers > 0) {
    text += fmt::format("; the workers alive together held at most {} ({} at {})", size_words(memory.peak_live_bytes),
                        plural(memory.peak_live_workers, "worker", "workers"),
                        seconds(memory.peak_live_s - report.result.origin_s));
  }
  return text + "\n";
}

std::string gate_words(const WatchReport& report, const Check& check) {
  const WorkerMemory& memory = report.findings.memory;
  if (!memory.largest) return fmt::format("no worker held any memory ({} sampled)", check.count);
  const WorkerMemoryTrace& largest = memory.workers[*memory.largest];
  return fmt::format("a worker held {} (pid {}, {})", size_words(largest.peak.second.pss_bytes),
                     report.result.processes[largest.record].pid, largest.owner);
}

/// Whether `trace` copied what it read: its private memory grew by kMinGrowthBytes or more from its
/// first sample to its largest, and its shared memory fell by kMinSharedFall of that.
bool copied_on_read(const WorkerMemoryTrace& trace) {
  const MemoryUse& first = trace.first.second;
  const MemoryUse& peak = trace.peak.second;
  if (trace.samples < 2 || peak.private_dirty_bytes < first.private_dirty_bytes + kMinGrowthBytes) return false;
  const std::uint64_t growth = peak.private_dirty_bytes - first.private_dirty_bytes;
  const std::uint64_t fall = first.shared_bytes > peak.shared_bytes ? first.shared_bytes - peak.shared_bytes : 0;
  return static_cast<double>(fall) >= kMinSharedFall * static_cast<double>(growth);
}

void find_copy_on_read(const CheckInput& input, Check& check, Findings& findings) {
  const Check& sampled = findings.check("worker_memory");  // found by the row before this one
  check.seen = sampled.seen;
  check.unseen_why = sampled.unseen_why;
  WorkerMemory& memory = findings.memory;
  std::map<std::string, std::size_t> group_of;  // owner -> index into copy_on_read
  for (std::size_t i = 0; i < memory.workers.size(); ++i) {
    const WorkerMemoryTrace& trace = memory.workers[i];
    if (input.result.processes[trace.record].start != WorkerStart::fork || !copied_on_read(trace)) continue;
    const auto [found, added] = group_of.emplace(trace.owner, memory.copy_on_read.size());
    if (added) {
      CopyOnRead group;
      group.owner = trace.owner;
      if (const LoaderView* loader = input.python.loader_of_worker(input.result.processes[trace.record].pid)) {
        group.dataset = loader->dataset_class();
      }
      memory.copy_on_read.push_back(group);
    }
    memory.copy_on_read[found->second].workers.push_back(i);
  }
  for (CopyOnRead& group : memory.copy_on_read) {
    std::uint64_t growth = 0;
    std::uint64_t fall = 0;
    for (const std::size_t i : group.workers) {
      const WorkerMemoryTrace& trace = memory.workers[i];
      growth += trace.peak.second.private_dirty_bytes - trace.first.second.private_dirty_bytes;
      fall +=
          trace.first.second.shared_bytes - std::min(trace.first.second.shared_bytes, trace.peak.second.shared_bytes);
    }
    group.private_growth_bytes = growth / group.workers.size();
    group.shared_fall_bytes = fall / group.workers.size();
    const std::string what = group.dataset.empty() ? "the data they inherited by fork"
                                                   : "its dataset (" + group.dataset + "), inherited by fork";
    group.sentence = fmt::format(
        "{} of {} copied what they read of {}: each one's private memory grew by {} "
        "on average while its shared memory fell by {}, since reading a Python object writes its reference count "
        "and so copies its page; hold the data in numpy arrays or tensors rather than lists or dicts of Python "
        "objects (pytorch#13246)",
        plural(static_cast<long>(group.workers.size()), "fork worker", "fork workers"), group.owner, what,
        size_words(group.private_growth_bytes), size_words(group.shared_fall_bytes));
    check.details.push_back(group.sentence);
    check.count += static_cast<long>(group.workers.size());
  }
}

std::string copy_section(const WatchReport& /*report*/, const Check& check) {
  return details_section(check, "worker copied what it read", "workers copied what they read");
}

std::string copy_verdict(const WatchReport& /*report*/, const Check& check) {
  return "Workers' memory grew as they read: " + check.details.front() + ".";
}

std::string copy_gate_words(const WatchReport& /*report*/, const Check& check) {
  return fmt::format("{} copied what they read of a dataset inherited by fork",
                     plural(check.count, "worker", "workers"));
}

}  // namespace

CheckSpec worker_memory_check() {
  return {{"worker_memory", "--max-worker-memory", kHelp, nullptr, nullptr, nullptr, GateLimit::mebibytes},
          {find, section, nullptr, nullptr, gate_words}};
}

CheckSpec copy_on_read_check() {
  return {{"copy_on_read", "--max-copy-on-read", kCopyHelp},
          {find_copy_on_read, copy_section, nullptr, copy_verdict, copy_gate_words}};
}

}  // namespace dlreset::watch
