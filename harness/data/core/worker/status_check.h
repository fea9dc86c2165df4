// PyTorch's MP_STATUS_CHECK_INTERVAL (torch/utils/data/_utils/__init__.py), the one interval
// of the worker machinery: how long a wait for data lasts before the workers' health is checked
// again, how long a shutdown waits for workers before killing them, and how often a blocked
// worker checks that its parent is still there.
#pragma once

#include <chrono>

namespace dlreset::data::detail {

constexpr std::chrono::milliseconds kStatusCheckInterval{5000};
/// The same, in seconds, for the APIs and tests that take seconds.
constexpr double kStatusCheckIntervalS = std::chrono::duration<double>(kStatusCheckInterval).count();

}  // namespace dlreset::data::detail
