#include "harness/sys/clock.h"

namespace dlreset::sys {

double seconds_on(clockid_t clock) {
  timespec now{};
  ::clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

double monotonic_s() { return seconds_on(CLOCK_MONOTONIC); }

}  // namespace dlreset::sys
