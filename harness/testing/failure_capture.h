// A GoogleTest helper: the failure messages a block of assertions reports, kept from the test.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace dlreset::testing {

/// Runs `assertions` with GoogleTest's reporter intercepted on this thread and returns the
/// message of each failure they reported, which then does not fail the running test. How a
/// test checks what a failing matcher prints: the failure a user would read, word for word.
/// (gtest-spi.h's EXPECT_NONFATAL_FAILURE does the same, but cannot see local variables.)
std::vector<std::string> failures_reported_by(const std::function<void()>& assertions);

}  // namespace dlreset::testing
