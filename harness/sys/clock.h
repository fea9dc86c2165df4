// The clock every time dlreset records is on: CLOCK_MONOTONIC, which every process of the machine
// shares, so the event log, the worker processes and the watcher can order each other's times.
#pragma once

#include <time.h>

namespace dlreset::sys {

/// Seconds on `clock` (clock_gettime(2)).
double seconds_on(clockid_t clock);

/// Seconds on CLOCK_MONOTONIC: the event log's, the watcher's and the process events
/// connector's clock.
double monotonic_s();

}  // namespace dlreset::sys
