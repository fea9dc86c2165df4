#include "watch/analysis/input_wait.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "watch/analysis/wording.h"

namespace dlreset::watch {

namespace {

using IteratorId = std::pair<pid_t, std::string>;

/// The hook's buckets: bucket 0 is under 1 us, bucket k >= 1 holds [2^(k-1), 2^k) us.
constexpr int kBuckets = 41;
/// The first bucket the hook reads for head-of-line blocking: waits of 2^10 us or more
/// (watch/hook/python/_dlreset_hook/blocking.py).
constexpr int kFirstSlowBucket = 11;

double bucket_top_s(int bucket) { return std::ldexp(1.0, bucket) * 1e-6; }

/// What the tree and the hook say of each iterator's workers.
struct IteratorWorkers {
  std::map<IteratorId, std::size_t> generation;  ///< Index into the generations.
  std::map<pid_t, double> ready_s;               ///< Each worker's worker_ready.
};

IteratorWorkers iterator_workers(const GenerationReport& generations, const PythonView& python) {
  IteratorWorkers found;
  for (std::size_t g = 0; g < generations.generations.size(); ++g) {
    if (g < python.generation_made.size() && python.generation_made[g]) {
      const HookEvent& made = python.events[*python.generation_made[g]];
      found.generation.emplace(IteratorId{made.pid, made.iterator}, g);
    }
  }
  for (const HookEvent& event : python.events) {
    if (event.kind == HookEventKind::worker_ready && found.ready_s.count(event.pid) == 0) {
      found.ready_s[event.pid] = event.time_s;
    }
  }
  return found;
}

/// The last worker_ready of a generation's members; empty where none said it was ready.
std::optional<double> ready_at(const std::vector<ProcessRecord>& records, const Generation& generation,
                               const IteratorWorkers& workers) {
  std::optional<double> last;
  for (const std::size_t member : generation.members) {
    const auto ready = workers.ready_s.find(records[member].pid);
    if (ready != workers.ready_s.end()) last = std::max(last.value_or(ready->second), ready->second);
  }
  return last;
}

/// The reset that stopped the newest earlier generation of the same parent and loader.
std::optional<std::size_t> reset_before(const GenerationReport& generations, const PythonView& python, std::size_t g) {
  const Generation& now = generations.generations[g];
  std::optional<std::size_t> stopped;
  for (std::size_t before = 0; before < g; ++before) {
    const Generation& old = generations.generations[before];
    if (old.parent != now.parent || old.loader_key != now.loader_key) continue;
    stopped = before < python.generation_stopped.size() ? python.generation_stopped[before] : std::nullopt;
  }
  if (stopped && is_reset(python.events[*stopped])) return stopped;
  return std::nullopt;
}

WaitCause cause_of(const PassWait& pass, const PythonView& python, const IteratorWorkers& workers) {
  if (workers.generation.count({pass.pid, pass.iterator}) != 0 ||
      (pass.pass_view && !python.events[python.passes[*pass.pass_view].begin_event].worker_pids.empty())) {
    return pass.number == 1 ? WaitCause::new_workers : WaitCause::workers_kept;
  }
  const LoaderView* loader = python.loader(pass.pid, pass.loader);
  if (loader != nullptr && loader->settings.workers == 0) return WaitCause::no_workers;
  return pass.number > 1 ? WaitCause::workers_kept : WaitCause::unknown;
}

/// The gap between `previous` and `next`, passes of one loader in one process.
std::optional<EpochGap> gap_between(const PassWaits& previous, const PassWait& before, const PassWaits& next,
                                    const PassWait& after, const std::vector<ProcessRecord>& records,
                                    const GenerationReport& generations, const IteratorWorkers& workers) {
  if (!previous.last_batch_s || !next.first_batch_s) return std::nullopt;
  const double from = *previous.last_batch_s;
  const double to = next.begun_s + *next.first_batch_s;
  if (to < from) return std::nullopt;  // passes that overlapped
  EpochGap gap;
  gap.total_s = to - from;
  if (before.iterator != after.iterator) {
    const auto old = workers.generation.find({before.pid, before.iterator});
    if (old != workers.generation.end()) {
      const std::optional<double> end = generations.generations[old->second].end_s;
      if (end && *end > from && *end <= to) gap.shutdown_s = *end - from;
    }
  }
  if (after.cause == WaitCause::new_workers && after.generation > 0) {
    const Generation& generation = generations.generations[static_cast<std::size_t>(after.generation - 1)];
    const std::optional<double> ready = ready_at(records, generation, workers);
    const double start = std::max(generation.start_s, from + gap.shutdown_s);
    if (ready) gap.startup_s = std::max(0.0, std::min(*ready, to) - start);
  }
  gap.first_fetch_s = std::max(0.0, gap.total_s - gap.shutdown_s - gap.startup_s);
  return gap;
}

}  // namespace

const char* to_string(WaitCause cause) {
  switch (cause) {
    case WaitCause::new_workers: return "new_workers";
    case WaitCause::workers_kept: return "workers_kept";
    case WaitCause::no_workers: return "no_workers";
    case WaitCause::unknown: break;
  }
  return "unknown";
}

double PassWait::fraction() const { return wait_s + step_s > 0.0 ? wait_s / (wait_s + step_s) : 0.0; }

double WaitTotals::fraction() const { return wait_s + step_s > 0.0 ? wait_s / (wait_s + step_s) : 0.0; }

void WaitTotals::add(const PassWait& pass, const PassWaits& waits) {
  ++passes;
  wait_s += pass.wait_s;
  step_s += pass.step_s;
  steady_s += pass.steady_wait_s;
  if (waits.first_batch_s) {
    first_batches_s.push_back(*waits.first_batch_s);
    switch (pass.cause) {
      case WaitCause::new_workers:
        new_workers_s += pass.first_wait_s;
        ++new_worker_starts;
        respawn_starts += pass.reset_event.has_value();
        break;
      case WaitCause::workers_kept:
        workers_kept_s += pass.first_wait_s;
        ++kept_starts;
        break;
      case WaitCause::no_workers: no_workers_s += pass.first_wait_s; break;
      case WaitCause::unknown: unknown_s += pass.first_wait_s; break;
    }
  }
  for (const auto& [bucket, count] : waits.hist)
    hist[static_cast<std::size_t>(std::clamp(bucket, 0, kBuckets - 1))] += count;
  if (waits.max_wait_s) max_steady_s = std::max(max_steady_s.value_or(*waits.max_wait_s), *waits.max_wait_s);
  blocked_waits += waits.blocked_waits;
  blocked_wait_s += waits.blocked_wait_s;
  if (waits.worst_blocked && (!worst_blocked || waits.worst_blocked->wait_s > worst_blocked->wait.wait_s)) {
    worst_blocked =
        WorstBlocked{*waits.worst_blocked, pass.pid, pass.loader.empty() ? pass.iterator : pass.loader, pass.number};
  }
}

long WaitTotals::slow_waits() const {
  long slow = 0;
  for (int bucket = kFirstSlowBucket; bucket < kBuckets; ++bucket) slow += hist[static_cast<std::size_t>(bucket)];
  return slow;
}

std::optional<double> WaitTotals::median_first_batch_s() const {
  if (first_batches_s.empty()) return std::nullopt;
  std::vector<double> sorted = first_batches_s;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t middle = sorted.size() / 2;
  return sorted.size() % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2.0;
}

std::optional<double> WaitTotals::steady_quantile_s(double quantile) const {
  long total = 0;
  for (const long count : hist) total += count;
  if (total == 0) return std::nullopt;
  const long target = std::max(1L, static_cast<long>(std::ceil(quantile * static_cast<double>(total))));
  long seen = 0;
  for (int bucket = 0; bucket < kBuckets; ++bucket) {
    seen += hist[static_cast<std::size_t>(bucket)];
    if (seen >= target) {
      const double top = bucket_top_s(bucket);
      return max_steady_s ? std::min(top, *max_steady_s) : top;
    }
  }
  return max_steady_s;
}

InputWait analyse_input_wait(const std::vector<ProcessRecord>& records, const GenerationReport& generations,
                             const PythonView& python) {
  InputWait found;
  if (python.hook != "on") {
    found.incomplete.push_back("the Python hook was " + python.hook);
    return found;
  }
  for (const HookedProcess& process : python.processes) {
    if (process.events_lost > 0) {
      found.incomplete.push_back(fmt::format("pid {} lost {} of its hook's events", process.pid, process.events_lost));
    }
  }
  const IteratorWorkers workers = iterator_workers(generations, python);
  std::map<IteratorId, std::vector<std::size_t>> views;  // iterator -> its passes in the view, in order
  for (std::size_t i = 0; i < python.passes.size(); ++i) {
    views[{python.passes[i].pid, python.passes[i].iterator}].push_back(i);
  }
  std::map<IteratorId, long> matched;  // iterator -> passes with their pass_waits
  for (std::size_t i = 0; i < python.events.size(); ++i) {
    const HookEvent& event = python.events[i];
    if (event.kind != HookEventKind::pass_waits) continue;
    const PassWaits& waits = event.waits;
    PassWait pass;
    pass.event = i;
    pass.pid = event.pid;
    pass.rank = event.rank;
    pass.loader = event.loader;
    pass.iterator = event.iterator;
    pass.number = waits.pass;
    const std::vector<std::size_t>& seen = views[{event.pid, event.iterator}];
    if (static_cast<std::size_t>(waits.pass) <= seen.size()) {
      pass.pass_view = seen[static_cast<std::size_t>(waits.pass - 1)];
      ++matched[{event.pid, event.iterator}];
      if (pass.loader.empty()) pass.loader = python.passes[*pass.pass_view].loader;
    }
    pass.cause = cause_of(pass, python, workers);
    if (const auto generation = workers.generation.find({pass.pid, pass.iterator});
        generation != workers.generation.end() && pass.cause == WaitCause::new_workers) {
      pass.generation = static_cast<int>(generation->second) + 1;
      pass.startup_s = ready_at(records, generations.generations[generation->second], workers);
      if (pass.startup_s) *pass.startup_s -= generations.generations[generation->second].start_s;
      pass.reset_event = reset_before(generations, python, generation->second);
    }
    pass.first_wait_s = waits.first_wait_s.value_or(0.0);
    pass.wait_s = waits.wait_s;
    pass.step_s = waits.step_s;
    pass.steady_wait_s = std::max(0.0, waits.wait_s - pass.first_wait_s);
    pass.first_batch_s = waits.first_batch_s;
    found.passes.push_back(pass);
  }
  long unmeasured = 0;
  for (const auto& [iterator, passes] : views) {
    const auto measured = matched.find(iterator);
    unmeasured += static_cast<long>(passes.size()) - (measured == matched.end() ? 0 : measured->second);
  }
  if (unmeasured > 0) {
    found.incomplete.push_back(fmt::format("{} the hook saw begin sent no pass_waits",
                                           plural(unmeasured, "pass", "passes")));
  }

  // The gaps: each loader's passes in a process, in the order they began.
  std::map<IteratorId, std::vector<std::size_t>> by_loader;
  for (std::size_t p = 0; p < found.passes.size(); ++p) {
    const PassWait& pass = found.passes[p];
    by_loader[{pass.pid, pass.loader.empty() ? pass.iterator : pass.loader}].push_back(p);
  }
  for (auto& [loader, passes] : by_loader) {
    const auto begun = [&](std::size_t p) { return python.events[found.passes[p].event].waits.begun_s; };
    std::stable_sort(passes.begin(), passes.end(), [&](std::size_t a, std::size_t b) { return begun(a) < begun(b); });
    for (std::size_t k = 1; k < passes.size(); ++k) {
      const PassWait& before = found.passes[passes[k - 1]];
      PassWait& after = found.passes[passes[k]];
      after.gap = gap_between(python.events[before.event].waits, before, python.events[after.event].waits, after,
                              records, generations, workers);
    }
  }

  for (const PassWait& pass : found.passes) {
    const PassWaits& waits = python.events[pass.event].waits;
    found.job.add(pass, waits);
    const std::string loader_key = pass.loader.empty() ? pass.iterator : pass.loader;
    auto loader = std::find_if(found.loaders.begin(), found.loaders.end(),
                               [&](const LoaderWait& l) { return l.pid == pass.pid && l.loader == loader_key; });
    if (loader == found.loaders.end()) {
      found.loaders.push_back(LoaderWait{pass.pid, pass.rank, loader_key, {}, {}});
      loader = found.loaders.end() - 1;
    }
    loader->totals.add(pass, waits);
    if (!waits.main_thread &&
        std::find(loader->threads.begin(), loader->threads.end(), waits.thread) == loader->threads.end()) {
      loader->threads.push_back(waits.thread);
    }
    auto process = std::find_if(found.processes.begin(), found.processes.end(),
                                [&](const ProcessWait& p) { return p.pid == pass.pid; });
    if (process == found.processes.end()) {
      found.processes.push_back(ProcessWait{pass.pid, pass.rank, {}});
      process = found.processes.end() - 1;
    }
    process->totals.add(pass, waits);
  }
  std::sort(found.processes.begin(), found.processes.end(), [](const ProcessWait& a, const ProcessWait& b) {
    return std::make_pair(a.rank.value_or(1 << 30), a.pid) < std::make_pair(b.rank.value_or(1 << 30), b.pid);
  });
  for (std::size_t p = 0; p < found.passes.size(); ++p) {
    if (!found.passes[p].first_batch_s) continue;
    if (!found.longest_first_batch ||
        *found.passes[p].first_batch_s > *found.passes[*found.longest_first_batch].first_batch_s) {
      found.longest_first_batch = p;
    }
  }
  return found;
}

}  // namespace dlreset::watch
