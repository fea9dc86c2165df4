// failures_reported_by: GoogleTest's failure reporter, intercepted for a block of assertions.
#include "harness/testing/failure_capture.h"

#include <gtest/gtest-spi.h>

namespace dlreset::testing {

std::vector<std::string> failures_reported_by(const std::function<void()>& assertions) {
  ::testing::TestPartResultArray results;
  {
    const ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    assertions();
  }
  std::vector<std::string> messages;
  for (int i = 0; i < results.size(); ++i) {
    if (results.GetTestPartResult(i).failed()) {
      messages.emplace_back(results.GetTestPartResult(i).message());
    }
  }
  return messages;
}

}  // namespace dlreset::testing
