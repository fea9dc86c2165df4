// Where a pass's time went (harness/data/pass_times.h): the DataLoader accounts every pass,
// from iter() to its end, with two clock reads per next(). These tests count what it recorded:
// calls, steps, first batches, and the cause of each pass's first wait.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "harness/data/data_loader.h"
#include "harness/data/multi_processing_dataloader_iter.h"
#include "tests/support/fixtures.h"

namespace dlreset::data {
namespace {

using ::dlreset::testing::run_epoch;
using ::dlreset::testing::synthetic_loader;

constexpr int kPassEpochs = 3;
constexpr std::int64_t kPassSamples = 24;
constexpr std::int64_t kPassBatchSize = 4;
constexpr std::int64_t kPassBatches = kPassSamples / kPassBatchSize;

class PassTimesBackends : public ::testing::TestWithParam<StartMethod> {};

std::shared_ptr<DataLoader> loader_with(StartMethod method, int workers, bool persistent) {
  return synthetic_loader(kPassSamples,
                          testing::worker_loader_options("probe", method, workers, persistent, kPassBatchSize));
}

std::int64_t passes_started_by(const DataLoader& loader, PassStart start) {
  std::int64_t count = 0;
  for (const PassTimes& pass : loader.passes()) count += pass.start == start ? 1 : 0;
  return count;
}

/// Run to its end, a pass of N batches makes N + 1 next() calls (the last returns the end) and
/// N steps, and its first batch is recorded once.
void expect_whole_passes(const DataLoader& loader) {
  ASSERT_EQ(loader.passes().size(), static_cast<std::size_t>(kPassEpochs));
  for (std::size_t p = 0; p < loader.passes().size(); ++p) {
    const PassTimes& pass = loader.passes()[p];
    EXPECT_EQ(pass.batches, kPassBatches) << "pass " << p;
    EXPECT_EQ(pass.next_calls, kPassBatches + 1) << "pass " << p;
    EXPECT_EQ(pass.steps, kPassBatches) << "pass " << p;
    EXPECT_GT(pass.first_batch_s, 0.0) << "pass " << p;
    EXPECT_GE(pass.first_batch_s, pass.iter_s) << "pass " << p << ": the first batch counts from iter()";
    EXPECT_LE(pass.wait_at_start_s, pass.wait_s) << "pass " << p;
    EXPECT_NEAR(pass.steady_wait_s() + pass.wait_at_start_s, pass.wait_s, 1e-12) << "pass " << p;
    EXPECT_GT(pass.last_batch_returned_s, pass.iter_called_s + pass.first_batch_s)
        << "pass " << p << ": its last batch came after its first";
  }
  for (std::size_t p = 1; p < loader.passes().size(); ++p) {
    EXPECT_GT(loader.passes()[p].iter_called_s, loader.passes()[p - 1].iter_called_s) << "pass " << p;
    // The epoch gap (variants/epoch_gap.h) opens before the next pass begins.
    EXPECT_LT(loader.passes()[p - 1].last_batch_returned_s, loader.passes()[p].iter_called_s) << "pass " << p;
  }
}

TEST_P(PassTimesBackends, PersistentWorkersStartOnlyTheFirstPass) {
  auto loader = loader_with(GetParam(), 2, /*persistent=*/true);
  for (int epoch = 0; epoch < kPassEpochs; ++epoch) run_epoch(*loader);
  expect_whole_passes(*loader);
  EXPECT_EQ(passes_started_by(*loader, PassStart::new_workers), 1);
  EXPECT_EQ(passes_started_by(*loader, PassStart::workers_kept), kPassEpochs - 1);
  EXPECT_EQ(loader->passes().front().start, PassStart::new_workers);
}

TEST_P(PassTimesBackends, FreshWorkersStartEveryPass) {
  auto loader = loader_with(GetParam(), 2, /*persistent=*/false);
  for (int epoch = 0; epoch < kPassEpochs; ++epoch) run_epoch(*loader);
  expect_whole_passes(*loader);
  EXPECT_EQ(passes_started_by(*loader, PassStart::new_workers), kPassEpochs);
  EXPECT_EQ(passes_started_by(*loader, PassStart::workers_kept), 0);
}

TEST_P(PassTimesBackends, APassCutShortHasOneStepFewerThanItsCalls) {
  auto loader = loader_with(GetParam(), 2, /*persistent=*/true);
  constexpr std::int64_t kTaken = 3;
  for (int epoch = 0; epoch < 2; ++epoch) {
    const std::shared_ptr<BatchIterator> it = loader->iter();
    for (std::int64_t b = 0; b < kTaken; ++b) ASSERT_TRUE(it->next().has_value());
  }
  ASSERT_EQ(loader->passes().size(), 2u);
  for (const PassTimes& pass : loader->passes()) {
    EXPECT_EQ(pass.batches, kTaken);
    EXPECT_EQ(pass.next_calls, kTaken);
    EXPECT_EQ(pass.steps, kTaken - 1) << "no next() call closed the last step";
  }
}

TEST_P(PassTimesBackends, TheIteratorStatsShowTheCurrentPassSoFar) {
  auto loader = loader_with(GetParam(), 2, /*persistent=*/true);
  run_epoch(*loader);
  const std::shared_ptr<BatchIterator> it = loader->iter();
  ASSERT_TRUE(it->next().has_value());
  ASSERT_TRUE(it->next().has_value());
  const auto* iterator = dynamic_cast<const MultiProcessingDataLoaderIter*>(loader->iterator().get().get());
  ASSERT_NE(iterator, nullptr);
  const detail::IteratorStats stats = iterator->stats();
  EXPECT_EQ(stats.pass.batches, 2);
  EXPECT_EQ(stats.pass.next_calls, 2);
  EXPECT_EQ(stats.pass.steps, 1);
  EXPECT_EQ(stats.pass.start, PassStart::workers_kept);
}

INSTANTIATE_TEST_SUITE_P(StartMethods, PassTimesBackends, ::testing::Values(StartMethod::thread, StartMethod::fork),
                         testing::start_method_name);

TEST(PassTimes, WithoutWorkersNoPassStartsWorkers) {
  auto loader = loader_with(StartMethod::thread, 0, /*persistent=*/false);
  for (int epoch = 0; epoch < kPassEpochs; ++epoch) run_epoch(*loader);
  expect_whole_passes(*loader);
  EXPECT_EQ(passes_started_by(*loader, PassStart::new_workers), 0);
  EXPECT_EQ(passes_started_by(*loader, PassStart::workers_kept), kPassEpochs);
}

}  // namespace
}  // namespace dlreset::data
