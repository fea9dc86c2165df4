// The input wait of real torch loops whose stalls are known (tests/watch/input_stall.py): a
// worker that sleeps F ms a batch and a loop that sleeps S ms a step, with W workers, wait
// max(0, F/W - S) ms a batch in the steady state. The watch must measure the fraction that sets,
// within 3 points, and the clean twin (F = 0) must measure none and find nothing. And a loop that
// waits in line (tests/watch/head_of_line.py): its head-of-line blocked waits counted exactly,
// its balanced twin's none.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/command.h"
#include "tests/support/fixtures.h"
#include "tests/support/python_torch.h"
#include "tests/watch/watch_json.h"

namespace dlreset::watch {
namespace {

/// The loop's step: long enough that next()'s own cost with its batch ready stays near a point
/// of the fraction. That cost is real wait, which the watch counts: on two cores shared with
/// other work it is about half a millisecond a batch (3% of a 20 ms step, 1% of this one). The
/// program makes up its sleeps' late wakes itself (tests/watch/input_stall.py).
constexpr double kStepMs = 40.0;
/// The most the measured steady-state fraction may differ from the one set, in points.
constexpr double kTolerancePoints = 3.0;

struct StallCase {
  int workers = 1;
  int percent = 0;  ///< The steady-state wait fraction set, in percent.

  /// F = W * (S + wait), where wait = S * f / (1 - f); for 0%, half of what would make it wait.
  double fetch_ms() const {
    if (percent == 0) return workers * kStepMs / 2.0;
    const double fraction = percent / 100.0;
    return workers * (kStepMs + kStepMs * fraction / (1.0 - fraction));
  }
};

std::string case_name(const ::testing::TestParamInfo<StallCase>& info) {
  return "workers" + std::to_string(info.param.workers) + "_percent" + std::to_string(info.param.percent);
}

class InputStall : public ::testing::TestWithParam<StallCase> {
 protected:
  struct Watched {
    testing::CommandResult result;
    nlohmann::json report;
  };

  Watched watch_stall(double fetch_ms) {
    const std::string json = dir_.file("report.json");
    Watched watched;
    watched.result =
        testing::run_shell(testing::dlreset_binary() + " watch --no-live --expect-clean --json " + json + " -- " +
                           testing::kPython + " " + source_dir() + "/tests/watch/input_stall.py --workers " +
                           std::to_string(GetParam().workers) + " --fetch-ms " + std::to_string(fetch_ms) +
                           " --step-ms " + std::to_string(kStepMs) + " --batches 40");
    watched.report = read_json(json);
    return watched;
  }

  /// The steady-state wait over the whole job, as a share of itself and the steps, in percent.
  static double steady_percent(const nlohmann::json& report) {
    const nlohmann::json& job = report["input_wait"]["job"];
    const double steady = job["steady_wait_s"].get<double>();
    return 100.0 * steady / (steady + job["step_s"].get<double>());
  }

  testing::TempDir dir_;
};

TEST_P(InputStall, MeasuresTheSteadyStateWaitItWasSet) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Watched stalled = watch_stall(GetParam().fetch_ms());
  ASSERT_FALSE(stalled.report.empty()) << stalled.result.err;
  EXPECT_EQ(stalled.result.status, 0) << stalled.result.err;
  EXPECT_EQ(stalled.report["input_wait"]["complete"], true) << stalled.result.err;
  // Two epochs of one loader: two passes, the second with its workers kept.
  ASSERT_EQ(stalled.report["input_wait"]["passes"].size(), 2u) << stalled.result.err;
  EXPECT_EQ(stalled.report["input_wait"]["passes"][0]["cause"], "new_workers");
  EXPECT_EQ(stalled.report["input_wait"]["passes"][1]["cause"], "workers_kept");
  EXPECT_NEAR(steady_percent(stalled.report), GetParam().percent, kTolerancePoints) << stalled.result.err;
  EXPECT_THAT(stalled.result.err, ::testing::HasSubstr("input wait: the training loop waited"));
}

INSTANTIATE_TEST_SUITE_P(Watch, InputStall,
                         ::testing::Values(StallCase{1, 0}, StallCase{1, 25}, StallCase{1, 50}, StallCase{1, 75},
                                           StallCase{2, 0}, StallCase{2, 25}, StallCase{2, 50}, StallCase{2, 75}),
                         case_name);

/// The clean twin depends only on the number of workers, so it runs once for each.
class InputStallCleanTwin : public InputStall {};

TEST_P(InputStallCleanTwin, WaitsForNothingAndFindsNothing) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Watched clean = watch_stall(0.0);
  ASSERT_FALSE(clean.report.empty()) << clean.result.err;
  EXPECT_EQ(clean.result.status, 0) << clean.result.err;
  EXPECT_NEAR(steady_percent(clean.report), 0.0, kTolerancePoints) << clean.result.err;
  EXPECT_EQ(clean.report["findings"].size(), 0u) << clean.result.err;
  EXPECT_THAT(clean.result.err, ::testing::HasSubstr("it was well fed"));
}

INSTANTIATE_TEST_SUITE_P(Watch, InputStallCleanTwin, ::testing::Values(StallCase{1, 0}, StallCase{2, 0}),
                         [](const ::testing::TestParamInfo<StallCase>& info) {
                           return "workers" + std::to_string(info.param.workers);
                         });

/// tests/watch/head_of_line.py, 2 passes of 16 batches, watched. Its batches finish in an order
/// its workers keep through a shared counter, so the counts below do not depend on the machine's
/// load: skewed, worker 0's even batch is waited for while worker 1's next one is ready, 7 times a
/// pass (every even batch but the first); balanced, the batches arrive in order.
class HeadOfLine : public ::testing::Test {
 protected:
  struct Watched {
    testing::CommandResult result;
    nlohmann::json report;
  };

  Watched watch_loop(const std::string& arguments) {
    const std::string json = dir_.file("report.json");
    Watched watched;
    watched.result = testing::run_shell(testing::dlreset_binary() + " watch --no-live --expect-clean --json " + json +
                                        " -- " + testing::kPython + " " + source_dir() +
                                        "/tests/watch/head_of_line.py --batches 16 --epochs 2" + arguments);
    watched.report = read_json(json);
    return watched;
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
