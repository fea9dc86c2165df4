// Elapsed time, for the tests that bound how long something may take.
#pragma once

#include <chrono>

namespace dlreset::testing {

/// Seconds from `start` until now, on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace dlreset::testing
