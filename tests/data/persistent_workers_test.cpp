// PyTorch's persistent-worker semantics: iter() resets the kept iterator instead of building a
// new one, so workers and their dataset copies live across epochs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "harness/data/core/worker/status_check.h"
#include "harness/data/data_loader.h"
#include "harness/data/multi_processing_dataloader_iter.h"
#include "harness/trace/event_log.h"
#include "tests/support/fixtures.h"
#include "tests/support/process_census.h"

namespace dlreset::data {
namespace {

using ::dlreset::testing::run_epoch;
using ::dlreset::testing::synthetic_loader;

constexpr int kEpochs = 5;

class Backends : public ::testing::TestWithParam<StartMethod> {};

DataLoaderOptions options_for(StartMethod method, int workers, bool persistent) {
  return testing::worker_loader_options("probe", method, workers, persistent, /*batch_size=*/4);
}

TEST_P(Backends, PersistentWorkersAreSpawnedOnceOverFiveEpochs) {
  SyntheticDatasetOptions dataset;
  dataset.load_work = 20000;
  auto loader = synthetic_loader(24, options_for(GetParam(), 2, true), dataset);
  std::vector<std::int64_t> first_pids;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    EXPECT_EQ(run_epoch(*loader).size(), 24u) << "epoch " << epoch;
    if (epoch == 0) first_pids = testing::kept_worker_pids(*loader);
    EXPECT_EQ(testing::kept_worker_pids(*loader), first_pids) << "epoch " << epoch;
  }
  const LoaderCounters counters = loader->counters();
  EXPECT_EQ(counters.worker_spawns, 2);
  EXPECT_EQ(counters.iterators_created, 1);
  EXPECT_EQ(counters.dataset_loads, 2) << "each worker loads its copy once";
  EXPECT_EQ(counters.iterator_resets, 0);
  EXPECT_EQ(counters.shutdown_calls, 0) << "a persistent iterator survives the end of an epoch";
}

TEST_P(Backends, FreshWorkersAreSpawnedEveryEpoch) {
  const int workers = GetParam() == StartMethod::spawn ? 1 : 2;  // spawn costs ~0.5 s a worker
  SyntheticDatasetOptions dataset;
  dataset.load_work = 20000;
  auto loader = synthetic_loader(24, options_for(GetParam(), workers, false), dataset);
  for (int epoch = 0; epoch < kEpochs; ++epoch) run_epoch(*loader);
  const LoaderCounters counters = loader->counters();
  EXPECT_EQ(counters.worker_spawns, kEpochs * workers);
  EXPECT_EQ(counters.iterators_created, kEpochs);
  EXPECT_EQ(counters.dataset_loads, kEpochs * workers);
  // Exhaustion shuts a non-persistent iterator down, and its destructor calls again.
  EXPECT_EQ(counters.shutdown_calls, 2 * kEpochs);
  EXPECT_EQ(counters.iterator_resets, 0) << "a non-persistent loader never fills the field";
}

/// PyTorch's test_dataset_not_reset: after every epoch the main process changes its dataset
/// object. Persistent workers hold their own copy and never see the change; re-created
/// workers copy the dataset again and do.
std::vector<float> markers_per_epoch(StartMethod method, bool persistent, int epochs) {
  SyntheticDatasetOptions dataset_options;
  dataset_options.size = 12;
  auto dataset = std::make_shared<SyntheticDataset>(dataset_options);
  DataLoaderOptions options = options_for(method, 1, persistent);
  DataLoader loader(dataset, options);
  std::vector<float> markers;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    auto it = loader.iter();
    float marker = -1;
    while (std::optional<Batch> batch = it->next()) {
      marker = batch->inputs[0][0][0][1].item<float>();
    }
    markers.push_back(marker);
    dataset->set_marker(epoch + 1);
  }
  return markers;
}

TEST_P(Backends, PersistentWorkersKeepTheirDatasetCopy) {
  const std::vector<float> persistent = markers_per_epoch(GetParam(), true, 10);
  EXPECT_EQ(persistent, std::vector<float>(10, 0.0f));
  const std::vector<float> fresh = markers_per_epoch(GetParam(), false, 4);
  EXPECT_EQ(fresh, (std::vector<float>{0, 1, 2, 3}));
}

TEST_P(Backends, ResetInTheMiddleOfAnEpochDropsStaleResults) {
  auto loader = synthetic_loader(40, options_for(GetParam(), 2, true));
  {
    auto it = loader->iter();
    ASSERT_TRUE(it->next());  // 9 more batches in flight or unsent
  }
  std::vector<std::int64_t> seen = run_epoch(*loader);
  std::sort(seen.begin(), seen.end());
  std::vector<std::int64_t> all(40);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(seen, all);
  EXPECT_EQ(loader->counters().worker_spawns, 2);
}

TEST_P(Backends, InFlightIndexBatchesNeverExceedPrefetchFactorTimesWorkers) {
  // 40 samples in batches of 4: 10 batches, more than prefetch_factor (2) × 2 workers.
  auto loader = synthetic_loader(40, options_for(GetParam(), 2, true));
  const int bound = 2 * 2;
  for (int epoch = 0; epoch < 2; ++epoch) {
    auto it = loader->iter();
    auto* iterator = dynamic_cast<MultiProcessingDataLoaderIter*>(loader->iterator().get().get());
    ASSERT_NE(iterator, nullptr);
    EXPECT_EQ(iterator->stats().tasks_outstanding, bound) << "epoch " << epoch << ": primed";
    int batches = 0;
    while (it->next()) {
      ++batches;
      // A result that came back early waits without a refill, as in PyTorch, so fewer may be
      // in flight; never more.
      EXPECT_LE(iterator->stats().tasks_outstanding, bound) << "epoch " << epoch << ", after batch " << batches;
    }
    EXPECT_EQ(batches, 10);
    EXPECT_EQ(iterator->stats().tasks_outstanding, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(DataLoader, Backends,
                         ::testing::Values(StartMethod::thread, StartMethod::fork, StartMethod::spawn),
                         testing::start_method_name);

TEST(PersistentIterator, NullingTheFieldIsCountedAndShutsTheWorkersDown) {
  trace::EventLog::global().clear();
  auto loader = synthetic_loader(16, options_for(StartMethod::fork, 2, true));
  run_epoch(*loader);
  const std::vector<std::int64_t> pids = testing::kept_worker_pids(*loader);
  ASSERT_EQ(pids.size(), 2u);
  loader->iterator() = nullptr;  // what Lightning 1.5.0's reset() does
  LoaderCounters counters = loader->counters();
  EXPECT_EQ(counters.iterator_resets, 1);
  EXPECT_EQ(counters.shutdown_calls, 1) << "the destructor shut the workers down";
  // Shutdown waits one status-check interval for its workers before it kills them.
  EXPECT_TRUE(testing::wait_until_gone(pids, detail::kStatusCheckIntervalS).empty());
  loader->iterator() = nullptr;  // null over null: no reset
  EXPECT_EQ(loader->counters().iterator_resets, 1);

  run_epoch(*loader);  // the next epoch needs new workers
  counters = loader->counters();
  EXPECT_EQ(counters.worker_spawns, 4);
  EXPECT_EQ(counters.iterators_created, 2);

  int reset_events = 0;
  for (const auto& event : trace::EventLog::global().events()) {
    if (event.kind == trace::EventKind::iterator_reset && event.loader == "probe") ++reset_events;
  }
  EXPECT_EQ(reset_events, 1);
}

TEST(PersistentIterator, ExplicitShutdownThenNullCountsTwoCalls) {
  auto loader = synthetic_loader(16, options_for(StartMethod::thread, 1, true));
  run_epoch(*loader);
  auto* it = dynamic_cast<MultiProcessingDataLoaderIter*>(loader->iterator().get().get());
  ASSERT_NE(it, nullptr);
  it->shutdown_workers();
  EXPECT_TRUE(it->workers_shut_down());
  loader->iterator() = nullptr;
  EXPECT_EQ(loader->counters().shutdown_calls, 2);
}

TEST(DatasetLoads, MainProcessLoadsOnceWithoutWorkers) {
  SyntheticDatasetOptions dataset;
  dataset.load_work = 1000;
  DataLoaderOptions options;
  options.batch_size = 4;
  auto loader = synthetic_loader(16, options, dataset);
  for (int epoch = 0; epoch < 3; ++epoch) run_epoch(*loader);
  EXPECT_EQ(loader->counters().dataset_loads, 1);
  EXPECT_EQ(loader->counters().worker_spawns, 0);
}

}  // namespace
}  // namespace dlreset::data
