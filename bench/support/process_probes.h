// What the loader benchmarks read of a process from /proc, beside getrusage (sys::own_usage):
// the peak and current resident set, a worker's CPU time and switches, and the CPU time the
// hypervisor took, so that each figure says what it cost and how busy the machine was.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dlreset::bench {

/// Seconds on the steady clock, which all processes of this machine share.
double steady_now_s();

/// A number of /proc/PID/status (`pid` may be "self"): in KiB for "VmHWM" (the peak resident
/// set) and "VmRSS" (the current one), a count for "voluntary_ctxt_switches" and
/// "nonvoluntary_ctxt_switches"; 0 when it cannot be read.
double status_field(const std::string& pid, const std::string& field);

/// Restarts this process's peak-RSS count, so that an earlier benchmark's peak does not count,
/// and returns its resident set now, in KiB: what the peak is measured from. Empty when
/// /proc/self/clear_refs cannot be written.
std::optional<double> reset_peak_rss_kib();

/// CPU time process `pid` has used so far, in seconds, from the scheduler's nanosecond count
/// (/proc/PID/schedstat; /proc/PID/stat counts in 10 ms ticks, too coarse for an epoch); 0 when
/// it cannot be read.
double process_cpu_s(std::int64_t pid);

/// The minor page faults of process `pid` so far; 0 when it cannot be read.
double process_minor_faults(std::int64_t pid);

/// Seconds of this machine's CPUs that its hypervisor gave to other guests so far (the
/// "steal" of /proc/stat's first line, in clock ticks), or 0 where it is not counted.
double stolen_s();

/// The share of the machine's CPU time that its hypervisor took over `wall_s` seconds in which
/// it took `stolen` seconds: on a shared virtual machine, the phases in which the back-ends fare
/// differently.
double stolen_share(double stolen, double wall_s);

}  // namespace dlreset::bench
