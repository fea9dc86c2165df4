// Where a fit's time went (variants/data_time.h), counted per pass of each loader: Lightning
// 1.5.0 starts new workers at every pass's start, 1.5.1 with persistent workers only at the
// first; 1.5.0's extra waits at those starts are what makes its fit slower; and the gaps between
// passes (variants/epoch_gap.h) hold 1.5.0's shutdowns and starts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "tests/lightning/probe_module.h"
#include "tests/lightning/short_fit.h"
#include "tests/support/fixtures.h"
#include "variants/epoch_gap.h"
#include "variants/fit_report.h"

// The file's own namespace: the suite's files compile together (a unity build), and each names
// its fit's sizes alike.
namespace dlreset::variants::data_time_test {
namespace {

constexpr int kEpochs = 3;
constexpr int kWorkers = 2;
constexpr std::int64_t kTrainBatches = 4;
constexpr std::int64_t kValBatches = 3;
constexpr std::int64_t kSanitySteps = 2;
/// How far an epoch gap's three parts may add up from the gap: the rounding of two subtractions
/// of differences of clock readings (about 10^-15 s), not time; generous, whatever the uptime.
constexpr double kSumTolerance = 1e-9;

FitReport fit(Variant variant, std::int64_t load_work) {
  data::DataLoaderOptions options =
      testing::worker_loader_options("train", data::StartMethod::fork, kWorkers, /*persistent=*/true, 4);
  data::SyntheticDatasetOptions dataset;
  dataset.load_work = load_work;
  auto [train, val] = testing::synthetic_train_val(64, 32, options, dataset);
  lightning::TrainerOptions trainer = testing::short_fit(kEpochs, kTrainBatches, kValBatches);
  trainer.num_sanity_val_steps = kSanitySteps;
  testing::ProbeModule model;
  return run_fit(variant, model, train, val, trainer);
}

std::int64_t count_started_by(const std::vector<data::PassTimes>& passes, data::PassStart start) {
  std::int64_t count = 0;
  for (const data::PassTimes& pass : passes) count += pass.start == start ? 1 : 0;
  return count;
}

/// Every pass's counts: the fetcher prefetches one batch ahead, so a pass cut at `limit`
/// batches takes limit + 1 from the loader and never asks for its end: as many next() calls as
/// batches, one step fewer, one first batch.
void expect_pass_counts(const std::vector<data::PassTimes>& passes, const std::vector<std::int64_t>& limits,
                        const std::string& loader) {
  ASSERT_EQ(passes.size(), limits.size()) << loader;
  for (std::size_t p = 0; p < passes.size(); ++p) {
    EXPECT_EQ(passes[p].batches, limits[p] + 1) << loader << " pass " << p;
    EXPECT_EQ(passes[p].next_calls, limits[p] + 1) << loader << " pass " << p;
    EXPECT_EQ(passes[p].steps, limits[p]) << loader << " pass " << p;
    EXPECT_GT(passes[p].first_batch_s, 0.0) << loader << " pass " << p;
  }
}

class DataTimeCounts : public ::testing::TestWithParam<Variant> {};

TEST_P(DataTimeCounts, RecordEveryPassWithTheCauseOfItsFirstWait) {
  const FitReport report = fit(GetParam(), 10000);
  const bool buggy = GetParam() == Variant::buggy;
  expect_pass_counts(report.train.passes, std::vector<std::int64_t>(kEpochs, kTrainBatches), "train");
  std::vector<std::int64_t> val_limits(kEpochs + 1, kValBatches);
  val_limits.front() = kSanitySteps;
  expect_pass_counts(report.val.passes, val_limits, "val");
  // 1.5.0: every pass starts new workers. 1.5.1: only each loader's first.
  EXPECT_EQ(count_started_by(report.train.passes, data::PassStart::new_workers), buggy ? kEpochs : 1);
  EXPECT_EQ(count_started_by(report.train.passes, data::PassStart::workers_kept), buggy ? 0 : kEpochs - 1);
  EXPECT_EQ(count_started_by(report.val.passes, data::PassStart::new_workers), buggy ? kEpochs + 1 : 1);
  EXPECT_EQ(count_started_by(report.val.passes, data::PassStart::workers_kept), buggy ? 0 : kEpochs);
  // The same passes, by span: the sanity check's one, and a training and a validation pass an epoch.
  EXPECT_EQ(report.data_time.whole_fit.passes, 2 * kEpochs + 1);
  EXPECT_EQ(report.data_time.sanity_check.passes, 1);
  EXPECT_EQ(report.data_time.sanity_check.starts_new_workers, 1);
  ASSERT_EQ(report.data_time.epochs.size(), static_cast<std::size_t>(kEpochs));
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    const DataTime& time = report.data_time.epochs[epoch];
    EXPECT_EQ(time.passes, 2) << "epoch " << epoch;
    EXPECT_EQ(time.first_batch_s.size(), 2u) << "epoch " << epoch;
    // 1.5.1's first epoch starts the training workers; the validation loader's came in the sanity check.
    const std::int64_t fresh = buggy ? 2 : (epoch == 0 ? 1 : 0);
    EXPECT_EQ(time.starts_new_workers, fresh) << "epoch " << epoch;
    EXPECT_EQ(time.starts_workers_kept, 2 - fresh) << "epoch " << epoch;
  }
}

/// The time between two passes of a loader (variants/epoch_gap.h): 1.5.0 shuts the old workers
/// down and starts new ones in every gap, 1.5.1 keeps them, so that neither happens in any. A
/// loader has a gap before every pass but its first: the training loader one fewer than the
/// epochs, the validation loader one an epoch (the sanity check's pass comes first).
TEST_P(DataTimeCounts, SplitEveryEpochGapIntoShutdownStartAndFirstFetch) {
  const FitReport report = fit(GetParam(), 10000);
  const bool buggy = GetParam() == Variant::buggy;
  using LoaderGaps = std::tuple<const char*, const LoaderReport*, std::int64_t>;
  for (const auto& [name, loader, expected] :
       {LoaderGaps{"train", &report.train, kEpochs - 1}, LoaderGaps{"val", &report.val, kEpochs}}) {
    ASSERT_EQ(loader->gaps.size(), loader->passes.size()) << name;
    const EpochGaps sum = sum_epoch_gaps(loader->passes, loader->gaps);
    EXPECT_EQ(sum.gaps, expected) << name;
    EXPECT_EQ(sum.gaps_starting_workers, buggy ? expected : 0) << name;
    EXPECT_EQ(sum.gaps_with_shutdown, buggy ? expected : 0) << name;
    std::int64_t gaps_with_startup = 0;
    for (std::size_t p = 0; p < loader->gaps.size(); ++p) {
      if (!loader->gaps[p]) continue;
      const EpochGap& gap = *loader->gaps[p];
      gaps_with_startup += gap.startup_s > 0.0 ? 1 : 0;
      EXPECT_GE(gap.first_fetch_s, 0.0) << name << " pass " << p;
      // The parts do not overlap and leave nothing out: they add up to the gap, to rounding.
      EXPECT_NEAR(gap.shutdown_s + gap.startup_s + gap.first_fetch_s, gap.total_s, kSumTolerance)
          << name << " pass " << p;
    }
    EXPECT_EQ(gaps_with_startup, buggy ? expected : 0) << name;
    if (!buggy) {
      EXPECT_EQ(sum.startup_s, 0.0) << name;
      EXPECT_EQ(sum.shutdown_s, 0.0) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, DataTimeCounts, ::testing::Values(Variant::buggy, Variant::fixed),
                         [](const ::testing::TestParamInfo<Variant>& info) { return to_string(info.param); });

/// Each worker's dataset load: about 0.3 s of real work (splitmix64 at 1-2 ns a number), so
/// that 1.5.0's 5 extra starts of 2 workers, each loading again, stand well above the fixed
/// costs of a start.
constexpr std::int64_t kLoadWork = 200'000'000;
/// How much of the buggy-fixed difference in whole-fit time may lie outside the difference of
/// their waits at the starts. What else differs between the two fits, as measured on the
/// project's 2-core machine with this workload (the failure message prints each part):
/// 1.5.0's iter() forks 2 workers per pass, which a process holding LibTorch takes 10 to 20 ms
/// each to do (the passes' iter_s: 0.1 to 0.2 s more than 1.5.1's over the fit), and its
/// fetcher's reset() shuts 2 down, some 10 ms a pass; fresh workers serve their later batches
/// a little slower too (steady-state waits differed by -0.02 to 0.13 s). Against a difference
/// of 1.6 to 2.0 s at half this load cost, about twice that here, that is 5 to 15%. 25% leaves
/// room for the noise of a machine shared with builds, and still fails when the waits at the
/// starts miss the new workers' loads (they would then explain next to nothing) or count them
/// as steady state.
constexpr double kUnexplainedShare = 0.25;

TEST(DataTimeAccounting, StartWaitsOfNewWorkersExplainWhyTheBuggyFitIsSlower) {
  const FitReport buggy = fit(Variant::buggy, kLoadWork);
  const FitReport fixed = fit(Variant::fixed, kLoadWork);
  const auto start_waits = [](const FitReport& report) {
    return report.data_time.whole_fit.wait_at_start_new_workers_s +
           report.data_time.whole_fit.wait_at_start_workers_kept_s;
  };
  const double fit_difference = buggy.total_s - fixed.total_s;
  const double start_wait_difference = start_waits(buggy) - start_waits(fixed);
  ASSERT_GT(fit_difference, 0.0) << "1.5.0 restarted " << buggy.data_time.whole_fit.starts_new_workers
                                 << " times and was not slower";
  EXPECT_LE(std::abs(fit_difference - start_wait_difference), kUnexplainedShare * fit_difference)
      << "whole fit: buggy " << buggy.total_s << " s, fixed " << fixed.total_s << " s; waits at the starts: buggy "
      << start_waits(buggy) << " s, fixed " << start_waits(fixed) << " s; inside iter(): buggy "
      << buggy.data_time.whole_fit.iter_s << " s, fixed " << fixed.data_time.whole_fit.iter_s << " s; steady: buggy "
      << buggy.data_time.whole_fit.wait_steady_s << " s, fixed " << fixed.data_time.whole_fit.wait_steady_s
      << " s; steps: buggy " << buggy.data_time.whole_fit.step_s << " s, fixed " << fixed.data_time.whole_fit.step_s
      << " s";
  EXPECT_EQ(buggy.data_time.whole_fit.starts_new_workers, 2 * kEpochs + 1);
  EXPECT_EQ(fixed.data_time.whole_fit.starts_new_workers, 2);
}

}  // namespace
}  // namespace dlreset::variants::data_time_test
