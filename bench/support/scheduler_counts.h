// How often a loader's processes slept, were preempted and faulted, for BM_LoaderEpochPaired.
#pragma once

#include <cstdint>
#include <vector>

namespace dlreset::bench {

/// Events of this process (all its threads) and of a loader's worker processes so far: context
/// switches, voluntary (the task slept) and involuntary (the scheduler took the core), and
/// minor page faults.
struct SchedulerCounts {
  double sleeps = 0.0;
  double preemptions = 0.0;
  double minor_faults = 0.0;

  SchedulerCounts& operator+=(const SchedulerCounts& other) {
    sleeps += other.sleeps;
    preemptions += other.preemptions;
    minor_faults += other.minor_faults;
    return *this;
  }
  SchedulerCounts operator-(const SchedulerCounts& other) const {
    return {sleeps - other.sleeps, preemptions - other.preemptions, minor_faults - other.minor_faults};
  }
};

/// This process's counts and those of `worker_pids` (none for thread workers, which are this
/// process's threads), summed; a worker that cannot be read adds nothing.
SchedulerCounts scheduler_counts(const std::vector<std::int64_t>& worker_pids);

}  // namespace dlreset::bench
