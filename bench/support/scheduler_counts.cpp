// How often a loader's processes slept, were preempted and faulted.
#include "bench/support/scheduler_counts.h"

#include <string>

#include "bench/support/process_probes.h"
#include "harness/sys/own_process.h"

namespace dlreset::bench {

SchedulerCounts scheduler_counts(const std::vector<std::int64_t>& worker_pids) {
  const sys::OwnUsage usage = sys::own_usage();
  SchedulerCounts total{static_cast<double>(usage.voluntary_switches), static_cast<double>(usage.involuntary_switches),
                        static_cast<double>(usage.minor_faults)};
  for (const std::int64_t pid : worker_pids) {
    total.sleeps += status_field(std::to_string(pid), "voluntary_ctxt_switches");
    total.preemptions += status_field(std::to_string(pid), "nonvoluntary_ctxt_switches");
    total.minor_faults += process_minor_faults(pid);
  }
  return total;
}

}  // namespace dlreset::bench
