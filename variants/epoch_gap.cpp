#include "variants/epoch_gap.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>

namespace dlreset::variants {

namespace {

/// A stretch of the monotonic clock; empty where `to` is not after `from`.
struct Span {
  double from = 0.0;
  double to = 0.0;

  double length() const { return std::max(0.0, to - from); }
};

Span intersect(const Span& a, const Span& b) { return {std::max(a.from, b.from), std::min(a.to, b.to)}; }

bool is_event(const trace::Event& event, trace::EventKind kind, const std::string& loader) {
  return event.kind == kind && event.loader == loader;
}

/// The old workers' shutdown seen inside `gap`: from its first worker_shutdown (or worker_exit) to
/// its last one. Empty where none of the loader's workers was told to exit or reaped in the gap.
std::optional<Span> shutdown_in(const std::vector<trace::Event>& events, const std::string& loader, const Span& gap) {
  std::optional<Span> found;
  for (const trace::Event& event : events) {
    if (!is_event(event, trace::EventKind::worker_shutdown, loader) &&
        !is_event(event, trace::EventKind::worker_exit, loader)) {
      continue;
    }
    if (event.time_s < gap.from || event.time_s > gap.to) continue;
    if (!found) {
      found = Span{event.time_s, event.time_s};
    } else {
      found->from = std::min(found->from, event.time_s);
      found->to = std::max(found->to, event.time_s);
    }
  }
  return found;
}

/// When the last of the workers that `pass`'s iter() started was ready: the latest of each one's
/// worker_started and dataset_loaded before `until_s` (the next pass's iter()), and `until_s`
/// for one that said neither by then. Empty where the iter() spawned none.
std::optional<double> last_ready_s(const std::vector<trace::Event>& events, const std::string& loader,
                                   const data::PassTimes& pass, double until_s) {
  // Its workers are those spawned inside it; a thread worker has the main process's pid, so
  // the worker's index tells them apart.
  std::vector<std::pair<int, std::int64_t>> started;
  const Span iter{pass.iter_called_s, pass.iter_called_s + pass.iter_s};
  for (const trace::Event& event : events) {
    if (is_event(event, trace::EventKind::worker_spawn, loader) && event.time_s >= iter.from &&
        event.time_s <= iter.to) {
      started.emplace_back(event.worker_id, event.pid);
    }
  }
  std::optional<double> last;
  for (const auto& [worker_id, pid] : started) {
    std::optional<double> ready;
    for (const trace::Event& event : events) {
      if (event.worker_id != worker_id || event.pid != pid || event.time_s < iter.from || event.time_s >= until_s ||
          (!is_event(event, trace::EventKind::worker_started, loader) &&
           !is_event(event, trace::EventKind::dataset_loaded, loader))) {
        continue;
      }
      ready = std::max(ready.value_or(event.time_s), event.time_s);
    }
    last = std::max(last.value_or(-std::numeric_limits<double>::infinity()), ready.value_or(until_s));
  }
  return last;
}

}  // namespace

void EpochGaps::add(const EpochGap& gap, bool started_workers) {
  ++gaps;
  gaps_starting_workers += started_workers ? 1 : 0;
  gaps_with_shutdown += gap.shutdown_s > 0.0 ? 1 : 0;
  total_s += gap.total_s;
  shutdown_s += gap.shutdown_s;
  startup_s += gap.startup_s;
  first_fetch_s += gap.first_fetch_s;
}

std::vector<std::optional<EpochGap>> epoch_gaps_of(const std::vector<data::PassTimes>& passes,
                                                   const std::vector<trace::Event>& events, const std::string& loader) {
  std::vector<std::optional<EpochGap>> gaps(passes.size());
  for (std::size_t p = 1; p < passes.size(); ++p) {
    const data::PassTimes& before = passes[p - 1];
    const data::PassTimes& pass = passes[p];
    if (before.batches == 0 || pass.batches == 0) continue;
    const Span gap{before.last_batch_returned_s, pass.iter_called_s + pass.first_batch_s};
    if (gap.to < gap.from) continue;  // passes that overlapped
    EpochGap split;
    split.total_s = gap.to - gap.from;
    const std::optional<Span> shutdown = shutdown_in(events, loader, gap);
    if (shutdown) split.shutdown_s = intersect(*shutdown, gap).length();
    if (pass.start == data::PassStart::new_workers) {
      const double until_s =
          p + 1 < passes.size() ? passes[p + 1].iter_called_s : std::numeric_limits<double>::infinity();
      if (const std::optional<double> ready = last_ready_s(events, loader, pass, until_s)) {
        const Span start = intersect({pass.iter_called_s, *ready}, gap);
        split.startup_s = start.length() - (shutdown ? intersect(start, *shutdown).length() : 0.0);
      }
    }
    split.first_fetch_s = std::max(0.0, split.total_s - split.shutdown_s - split.startup_s);
    gaps[p] = split;
  }
  return gaps;
}

EpochGaps sum_epoch_gaps(const std::vector<data::PassTimes>& passes, const std::vector<std::optional<EpochGap>>& gaps) {
  EpochGaps sum;
  for (std::size_t p = 0; p < passes.size() && p < gaps.size(); ++p) {
    if (gaps[p]) sum.add(*gaps[p], passes[p].start == data::PassStart::new_workers);
  }
  return sum;
}

}  // namespace dlreset::variants
