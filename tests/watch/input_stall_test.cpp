// The input wait of real torch loops whose stalls are known (tests/watch/input_stall.py): a
// worker that sleeps F ms a batch and a loop that sleeps S ms a step, with W workers, wait
// max(0, F/W - S) ms a batch in the steady state. The watch must measure the fraction that sets,
// within 3 points, and the clean twin (F = 0) must measure none and find nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <exception>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/support/python_torch.h"
#include "tests/watch/watch_json.h"
#include "tests/watch/watched.h"

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

constexpr std::array<StallCase, 8> kStallCases{{{1, 0}, {1, 25}, {1, 50}, {1, 75}, {2, 0}, {2, 25}, {2, 50}, {2, 75}}};
/// The clean twin depends only on the number of workers, so it runs once for each.
constexpr std::array<int, 2> kTwinWorkers{1, 2};

std::string case_name(const StallCase& stall) {
  return "workers" + std::to_string(stall.workers) + "_percent" + std::to_string(stall.percent);
}
std::string twin_name(int workers) { return "workers" + std::to_string(workers); }

/// The runs of the cases this process runs, started as the first of the two suites begins, in
/// two lanes side by side: a lane a worker count, its runs one after the other. A run mostly
/// sleeps, so two at a time leave each other's fractions as they are: measured once each against
/// one at a time, they moved by at most 0.4 points (2 workers at 0%: 1.15 against 0.78), where
/// ten at once moved that one to 3.88. The suite takes as long as its longer lane, about half of
/// the runs' sum.
class StallRuns {
 public:
  /// The one set of runs of this process (a function's static: the suites' fixtures share it).
  static StallRuns& instance() {
    static StallRuns runs;
    return runs;
  }

  /// Waits for the run named `suite`/`name` (a test's name after its '/') and gives it.
  const Watched& get(const std::string& suite, const std::string& name) {
    const auto run = runs_.find(suite + "/" + name);
    if (run == runs_.end()) throw std::logic_error("no stall run was started for " + suite + "/" + name);
    return run->second.get();
  }

 private:
  struct Run {
    std::string key;
    int workers = 1;
    double fetch_ms = 0.0;
  };

  StallRuns() {
    std::map<int, std::vector<Run>> lanes;
    for (const StallCase& stall : kStallCases) {
      if (selected("InputStall", case_name(stall))) {
        lanes[stall.workers].push_back({"InputStall/" + case_name(stall), stall.workers, stall.fetch_ms()});
      }
    }
    for (const int workers : kTwinWorkers) {
      if (selected("InputStallCleanTwin", twin_name(workers))) {
        lanes[workers].push_back({"InputStallCleanTwin/" + twin_name(workers), workers, 0.0});
      }
    }
    if (!testing::python_torch_missing().empty()) return;  // each test fails and says why
    for (auto& [workers, runs] : lanes) {
      std::vector<std::pair<Run, std::promise<Watched>>> lane;
      for (Run& run : runs) {
        lane.emplace_back(run, std::promise<Watched>());
        runs_.emplace(run.key, lane.back().second.get_future().share());
      }
      lanes_.push_back(std::async(std::launch::async, [this, lane = std::move(lane)]() mutable {
        for (auto& [run, promise] : lane) {
          try {
            promise.set_value(watch_stall(run));
          } catch (...) {
            promise.set_exception(std::current_exception());
          }
        }
      }));
    }
  }

  /// Whether this process runs the test `name` of the suite instantiated as Watch/`suite`.
  static bool selected(const std::string& suite, const std::string& name) {
    const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
    for (int s = 0; s < unit.total_test_suite_count(); ++s) {
      const ::testing::TestSuite& tests = *unit.GetTestSuite(s);
      if (std::string(tests.name()) != "Watch/" + suite) continue;
      for (int t = 0; t < tests.total_test_count(); ++t) {
        const std::string test = tests.GetTestInfo(t)->name();
        if (tests.GetTestInfo(t)->should_run() && test.size() > name.size() &&
            test.compare(test.size() - name.size() - 1, std::string::npos, "/" + name) == 0) {
          return true;
        }
      }
    }
    return false;
  }

  Watched watch_stall(const Run& run) const {
    std::string file = run.key + ".json";
    std::replace(file.begin(), file.end(), '/', '-');
    return watch_command(dir_.file(file), "--no-live --expect-clean",
                         watch_test_program("input_stall.py --workers " + std::to_string(run.workers) + " --fetch-ms " +
                                            std::to_string(run.fetch_ms) + " --step-ms " + std::to_string(kStepMs) +
                                            " --batches 40"));
  }

  testing::TempDir dir_;
  std::map<std::string, std::shared_future<Watched>> runs_;
  /// Last, so that it goes first: its futures wait for the lanes before the rest goes.
  std::vector<std::future<void>> lanes_;
};

/// The steady-state wait over the whole job, as a share of itself and the steps, in percent.
double steady_percent(const nlohmann::json& report) {
  const nlohmann::json& job = report["input_wait"]["job"];
  const double steady = job["steady_wait_s"].get<double>();
  return 100.0 * steady / (steady + job["step_s"].get<double>());
}

/// Either suite, as it begins, starts the runs of both (StallRuns).
template <typename Param>
class StallSuite : public ::testing::TestWithParam<Param> {
 protected:
  static void SetUpTestSuite() { StallRuns::instance(); }
};

using InputStall = StallSuite<StallCase>;

TEST_P(InputStall, MeasuresTheSteadyStateWaitItWasSet) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Watched& stalled = StallRuns::instance().get("InputStall", case_name(GetParam()));
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

INSTANTIATE_TEST_SUITE_P(Watch, InputStall, ::testing::ValuesIn(kStallCases),
                         [](const ::testing::TestParamInfo<StallCase>& info) { return case_name(info.param); });

using InputStallCleanTwin = StallSuite<int>;

TEST_P(InputStallCleanTwin, WaitsForNothingAndFindsNothing) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Watched& clean = StallRuns::instance().get("InputStallCleanTwin", twin_name(GetParam()));
  ASSERT_FALSE(clean.report.empty()) << clean.result.err;
  EXPECT_EQ(clean.result.status, 0) << clean.result.err;
  EXPECT_NEAR(steady_percent(clean.report), 0.0, kTolerancePoints) << clean.result.err;
  EXPECT_EQ(clean.report["findings"].size(), 0u) << clean.result.err;
  EXPECT_THAT(clean.result.err, ::testing::HasSubstr("it was well fed"));
}

INSTANTIATE_TEST_SUITE_P(Watch, InputStallCleanTwin, ::testing::ValuesIn(kTwinWorkers),
                         [](const ::testing::TestParamInfo<int>& info) { return twin_name(info.param); });

}  // namespace
}  // namespace dlreset::watch
