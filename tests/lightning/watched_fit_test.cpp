// The regression gate in LoaderWatch's words: a fit of every variant, each loader watched. The
// fixed loops keep their workers; 1.5.0 fails the same expectations, and its failure carries
// the traceback that is why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/testing/failure_capture.h"
#include "harness/testing/loader_matchers.h"
#include "tests/lightning/probe_module.h"
#include "tests/lightning/short_fit.h"
#include "tests/support/fixtures.h"
#include "variants/fit_report.h"

// The file's own namespace: the suite's files compile together (a unity build), and each names
// its fit's sizes alike.
namespace dlreset::variants::watched_fit_test {
namespace {

using ::testing::HasSubstr;
using namespace dlreset::testing;  // the matchers read as sentences unqualified

constexpr int kEpochs = 3;
constexpr int kWorkers = 2;

/// A fit with persistent fork workers, both loaders watched from before the fit.
struct WatchedFit {
  explicit WatchedFit(Variant variant) {
    data::DataLoaderOptions options;
    options.batch_size = 4;
    options.num_workers = kWorkers;
    options.persistent_workers = true;
    options.start_method = data::StartMethod::fork;
    auto loaders = synthetic_train_val(64, 32, options);
    train = std::make_unique<LoaderWatch>(loaders.train);
    val = std::make_unique<LoaderWatch>(loaders.val);
    lightning::TrainerOptions trainer = testing::short_fit(kEpochs, 4, 3);
    ProbeModule model;
    run_fit(variant, model, loaders.train, loaders.val, trainer);
  }
  std::unique_ptr<LoaderWatch> train;
  std::unique_ptr<LoaderWatch> val;
};

/// What every loader of a fit should do with persistent workers: start each worker once, load
/// the dataset once per worker, and keep its iterator until teardown.
void expect_workers_kept(const LoaderWatch& watch) {
  EXPECT_THAT(watch, SpawnedWorkersOnce());
  EXPECT_THAT(watch, LoadedDatasetTimes(kWorkers));
  EXPECT_THAT(watch, NeverResetBefore(teardown));
}

class WatchedFits : public ::testing::TestWithParam<Variant> {};

TEST_P(WatchedFits, KeepEveryWorkerForTheWholeFit) {
  const WatchedFit fit(GetParam());
  expect_workers_kept(*fit.train);
  expect_workers_kept(*fit.val);
  // Lightning's teardown lets go of each iterator once; the vanilla loop has no teardown.
  const int at_teardown = GetParam() == Variant::vanilla ? 0 : 1;
  EXPECT_THAT(*fit.train, ResetAtTeardownTimes(at_teardown));
  EXPECT_THAT(*fit.val, ResetAtTeardownTimes(at_teardown));
}

INSTANTIATE_TEST_SUITE_P(NotBuggy, WatchedFits,
                         ::testing::Values(Variant::fixed, Variant::workaround, Variant::vanilla),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return std::string(to_string(info.param));
                         });

TEST(WatchedBuggyFit, FailsTheSameExpectationsWithTheTracebackThatIsWhy) {
  const WatchedFit fit(Variant::buggy);
  const std::vector<std::string> failures = failures_reported_by([&] { expect_workers_kept(*fit.train); });
  ASSERT_EQ(failures.size(), 3u) << "spawns, loads and resets all fail";
  EXPECT_THAT(failures[0], HasSubstr("expected 2 worker spawns (2 workers, once each), seen 6"));
  EXPECT_THAT(failures[1], HasSubstr("expected 2 dataset loads, seen 6"));
  EXPECT_THAT(failures[2], HasSubstr("expected 0 iterator resets before teardown, seen 2"));
  EXPECT_THAT(failures[2], HasSubstr("This traceback is why (reset 2 of 2)"));
  EXPECT_THAT(failures[2], HasSubstr("in repro::DataFetcher::reset\n"));
  EXPECT_THAT(failures[2], HasSubstr("in lightning::TrainingEpochLoop::on_run_start\n"));
  // The sanity check and every validation start the validation workers again.
  EXPECT_THAT(*fit.val, SpawnedWorkersTimes((kEpochs + 1) * kWorkers));
  EXPECT_THAT(*fit.val, ResetBeforeTeardownTimes(kEpochs));
}

}  // namespace
}  // namespace dlreset::variants::watched_fit_test
