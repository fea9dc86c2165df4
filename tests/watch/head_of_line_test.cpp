// A loop that waits in line under the watcher (tests/watch/head_of_line.py): its head-of-line
// blocked waits counted exactly, its balanced twin's none. The counts follow the order the
// workers keep, not the machine's load, so these run beside other suites, unlike the stall
// fractions of input_stall_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/fixtures.h"
#include "tests/support/python_torch.h"
#include "tests/watch/watch_json.h"
#include "tests/watch/watched.h"

namespace dlreset::watch {
namespace {

/// tests/watch/head_of_line.py, 2 passes of 16 batches, watched. Its batches finish in an order
/// its workers keep through a shared counter, so the counts below do not depend on the machine's
/// load: skewed, worker 0's even batch is waited for while worker 1's next one is ready, 7 times a
/// pass (every even batch but the first); balanced, the batches arrive in order.
class HeadOfLine : public ::testing::Test {
 protected:
  Watched watch_loop(const std::string& arguments) {
    return watch_command(dir_.file("report.json"), "--no-live --expect-clean",
                         watch_test_program("head_of_line.py --batches 16 --epochs 2" + arguments));
  }

  testing::TempDir dir_;
};

TEST_F(HeadOfLine, EachEvenBatchWaitedForWhileTheNextWasReadyIsABlockedWait) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Watched skewed = watch_loop("");
  ASSERT_FALSE(skewed.report.empty()) << skewed.result.err;
  EXPECT_EQ(skewed.result.status, 0) << skewed.result.err;
  const nlohmann::json& wait = skewed.report["input_wait"];
  ASSERT_EQ(wait["passes"].size(), 2u) << skewed.result.err;
  for (const auto& pass : wait["passes"]) {
    EXPECT_EQ(pass["blocked_waits"], 7) << skewed.result.err;
    EXPECT_EQ(pass["worst_blocked"]["ready"], 1) << skewed.result.err;
    EXPECT_EQ(pass["worst_blocked"]["worker"], 0) << skewed.result.err;
    EXPECT_EQ(pass["worst_blocked"]["batch"].get<long>() % 2, 1) << skewed.result.err;  // an even index, from 1
  }
  const nlohmann::json& job = wait["job"];
  EXPECT_EQ(job["blocked_waits"], 14) << skewed.result.err;
  EXPECT_GE(job["slow_waits"].get<long>(), 14) << skewed.result.err;
  EXPECT_EQ(job["worst_blocked"]["worker"], 0) << skewed.result.err;
  EXPECT_EQ(wait["ranks"][0]["totals"]["blocked_waits"], 14) << skewed.result.err;
  EXPECT_EQ(wait["loaders"][0]["totals"]["blocked_waits"], 14) << skewed.result.err;
  EXPECT_THAT(skewed.result.err, ::testing::HasSubstr("head-of-line blocking: in 14 of "));
  EXPECT_THAT(skewed.result.err, ::testing::ContainsRegex("the longest: [0-9.]+ ms for batch [0-9]+ of pass [12] of "
                                                          "L1 .*\\(worker 0's\\), later batches ready: 1\n"));
}

TEST_F(HeadOfLine, TheBalancedTwinWaitsAsOftenAndIsNeverBlocked) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Watched balanced = watch_loop(" --balanced");
  ASSERT_FALSE(balanced.report.empty()) << balanced.result.err;
  EXPECT_EQ(balanced.result.status, 0) << balanced.result.err;
  const nlohmann::json& job = balanced.report["input_wait"]["job"];
  // Of the 30 waits after a pass's first, 50 ms each less the loop's own time, most were read: all
  // but where a busy machine held the loop up that long.
  EXPECT_GE(job["slow_waits"].get<long>(), 15) << balanced.result.err;
  EXPECT_EQ(job["blocked_waits"], 0) << balanced.result.err;
  EXPECT_EQ(job["worst_blocked"], nullptr) << balanced.result.err;
  EXPECT_THAT(balanced.result.err, ::testing::Not(::testing::HasSubstr("head-of-line")));
}

}  // namespace
}  // namespace dlreset::watch
