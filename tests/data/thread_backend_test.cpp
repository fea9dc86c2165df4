// The thread back-end and the event log under concurrency. These tests run no LibTorch op
// (batches are read with next_raw(), or pinned by a function that makes no tensor) and start no
// process, so
// ThreadSanitizer sees every access that matters: build them with the tsan preset.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "harness/data/core/errors.h"
#include "harness/data/core/interrupt.h"
#include "harness/data/core/worker/status_check.h"
#include "harness/data/core/worker/worker_info.h"
#include "harness/data/data_loader.h"
#include "harness/data/multi_processing_dataloader_iter.h"
#include "harness/trace/event_log.h"
#include "tests/support/elapsed.h"
#include "tests/support/fault_dataset.h"
#include "tests/support/fixtures.h"
#include "tests/support/process_census.h"

namespace dlreset::data {
namespace {

using ::dlreset::testing::fault_loader;
using ::dlreset::testing::FaultDatasetOptions;
using ::dlreset::testing::ProcessCensus;
using ::dlreset::testing::run_epoch;
using ::dlreset::testing::synthetic_loader;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

DataLoaderOptions thread_options(int workers, bool persistent) {
  return testing::worker_loader_options("threads", StartMethod::thread, workers, persistent, /*batch_size=*/3);
}

/// A fault test's loader: thread workers, not kept, over the samples in order.
DataLoaderOptions in_order_thread_options(int workers) {
  DataLoaderOptions options = thread_options(workers, false);
  options.shuffle = false;
  return options;
}

BaseDataLoaderIter& base(const std::shared_ptr<BatchIterator>& it) { return dynamic_cast<BaseDataLoaderIter&>(*it); }

void expect_every_sample_once(std::vector<std::int64_t> seen, std::int64_t size, int epoch) {
  std::sort(seen.begin(), seen.end());
  std::vector<std::int64_t> all(static_cast<std::size_t>(size));
  for (std::int64_t i = 0; i < size; ++i) all[static_cast<std::size_t>(i)] = i;
  EXPECT_EQ(seen, all) << "epoch " << epoch;
}

TEST(ThreadBackend, PersistentWorkersDeliverEverySampleOnceEveryEpoch) {
  SyntheticDatasetOptions dataset;
  dataset.load_work = 10000;
  auto loader = synthetic_loader(50, thread_options(3, true), dataset);
  for (int epoch = 0; epoch < 20; ++epoch) expect_every_sample_once(run_epoch(*loader), 50, epoch);
  EXPECT_EQ(loader->counters().worker_spawns, 3);
  EXPECT_EQ(loader->counters().dataset_loads, 3);
}

/// A census taken after one thread has come and gone: a sanitizer's runtime starts a thread of
/// its own the first time the program starts one (ThreadSanitizer does), and that thread must
/// not count as a worker left behind.
ProcessCensus census_after_first_thread() {
  std::thread([] {}).join();
  return testing::wait_for_census(ProcessCensus::take(), 0.0);
}

TEST(ThreadBackend, FreshWorkersEveryEpochAreJoinedEveryEpoch) {
  const ProcessCensus baseline = census_after_first_thread();
  auto loader = synthetic_loader(20, thread_options(2, false));
  for (int epoch = 0; epoch < 10; ++epoch) expect_every_sample_once(run_epoch(*loader), 20, epoch);
  EXPECT_EQ(loader->counters().worker_spawns, 20);
  const ProcessCensus after = testing::wait_for_census(baseline, 3.0);
  EXPECT_EQ(after.threads, baseline.threads);
}

TEST(ThreadBackend, IteratorNulledEveryEpochAsLightning150DidLeavesNoThreadBehind) {
  const ProcessCensus baseline = census_after_first_thread();
  auto loader = synthetic_loader(20, thread_options(2, true));
  for (int epoch = 0; epoch < 10; ++epoch) {
    if (auto* it = dynamic_cast<MultiProcessingDataLoaderIter*>(loader->iterator().get().get())) {
      it->shutdown_workers();
    }
    loader->iterator() = nullptr;
    expect_every_sample_once(run_epoch(*loader), 20, epoch);
  }
  EXPECT_EQ(loader->counters().worker_spawns, 20);
  EXPECT_EQ(loader->counters().iterator_resets, 9);
  loader.reset();
  EXPECT_EQ(testing::wait_for_census(baseline, 3.0).threads, baseline.threads);
}

TEST(ThreadBackend, ResetMidEpochDropsTheResultsStillOnTheirWay) {
  auto loader = synthetic_loader(30, thread_options(2, true));
  auto it = loader->iter();
  ASSERT_TRUE(base(it).next_raw());
  ASSERT_TRUE(base(it).next_raw());
  // The next epoch starts with tasks of this one still queued or running.
  expect_every_sample_once(run_epoch(*loader), 30, 1);
}

TEST(ThreadBackend, WorkerExceptionCrossesToTheMainThread) {
  FaultDatasetOptions dataset;
  dataset.throw_at = 4;
  auto loader = fault_loader(12, in_order_thread_options(2), dataset);
  auto it = loader->iter();
  ASSERT_TRUE(base(it).next_raw());
  try {
    base(it).next_raw();
    FAIL() << "no exception";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.worker_id(), 1);
    EXPECT_THAT(e.what(), HasSubstr("told to fail at sample 4"));
  }
  EXPECT_TRUE(base(it).next_raw());
}

TEST(ThreadBackend, HungWorkerTimesOutAndIsStoppedOnShutdown) {
  FaultDatasetOptions dataset;
  dataset.hang_at = 0;
  DataLoaderOptions options = in_order_thread_options(1);
  options.timeout_s = 0.3;
  const auto start = Clock::now();
  {
    auto loader = fault_loader(6, options, dataset);
    auto it = loader->iter();
    EXPECT_THROW(base(it).next_raw(), DataLoaderTimeoutError);
  }
  // The timeout is 0.3 s and the hung worker ends as soon as it is told to stop: the whole test
  // takes about 0.3 s here. A bound of PyTorch's 5 s status-check interval says "never waits for
  // the worker", not how fast.
  EXPECT_LT(testing::seconds_since(start), detail::kStatusCheckIntervalS);
}

/// A sample that lasts until its loader stops, as a slow download would that asks between
/// pieces; it counts the samples it gave up.
class GivesUpWhenStoppingDataset : public Dataset {
 public:
  explicit GivesUpWhenStoppingDataset(std::shared_ptr<std::atomic<int>> gave_up) : gave_up_(std::move(gave_up)) {}
  std::int64_t size() const override { return 6; }
  SampleShape sample_shape() const override { return {1}; }
  std::string spec() const override { return R"({"kind": "gives_up_when_stopping"})"; }
  std::unique_ptr<Dataset> clone() const override { return std::make_unique<GivesUpWhenStoppingDataset>(*this); }
  std::int64_t get(std::int64_t index, float* features) override {
    const WorkerInfo* worker = get_worker_info();
    while (worker != nullptr && !worker->stopping()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    gave_up_->fetch_add(1);
    features[0] = static_cast<float>(index);
    return 0;
  }

 private:
  std::shared_ptr<std::atomic<int>> gave_up_;
};

TEST(ThreadBackend, ADatasetThatAsksWhetherItsLoaderIsStoppingEndsItsSampleAtShutdown) {
  auto gave_up = std::make_shared<std::atomic<int>>(0);
  DataLoaderOptions options = in_order_thread_options(1);
  options.batch_size = 1;
  options.timeout_s = 0.2;
  {
    DataLoader loader(std::make_shared<GivesUpWhenStoppingDataset>(gave_up), options);
    auto it = loader.iter();
    EXPECT_THROW(base(it).next_raw(), DataLoaderTimeoutError);
    EXPECT_EQ(gave_up->load(), 0) << "stopping() was true before the loader stopped";
    dynamic_cast<MultiProcessingDataLoaderIter&>(*it).shutdown_workers();
    // Shutdown waits for the worker thread, which ends once its sample gives up: the first
    // task's, and no other, since a stopping worker skips the tasks still queued.
    EXPECT_EQ(gave_up->load(), 1);
  }
  EXPECT_EQ(gave_up->load(), 1);
}

TEST(ThreadBackend, InterruptFromAnotherThreadEndsTheWait) {
  FaultDatasetOptions dataset;
  dataset.hang_at = 0;
  auto loader = fault_loader(6, in_order_thread_options(1), dataset);
  auto it = loader->iter();
  std::thread signaller([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    request_interrupt(SIGTERM);
  });
  EXPECT_THROW(base(it).next_raw(), InterruptedError);
  signaller.join();
  clear_interrupt();
}

TEST(ThreadBackend, WorkerInitFnRunsOnceOnEveryWorkerThread) {
  std::atomic<int> calls{0};
  std::atomic<int> id_sum{0};
  DataLoaderOptions options = thread_options(4, true);
  options.worker_init_fn = [&](int worker_id) {
    calls.fetch_add(1);
    id_sum.fetch_add(worker_id);
  };
  auto loader = synthetic_loader(24, options);
  for (int epoch = 0; epoch < 3; ++epoch) run_epoch(*loader);
  EXPECT_EQ(calls.load(), 4);
  EXPECT_EQ(id_sum.load(), 0 + 1 + 2 + 3);
}

TEST(ThreadBackend, CountersCanBeReadWhileWorkersRun) {
  SyntheticDatasetOptions dataset;
  dataset.load_work = 200000;
  auto loader = synthetic_loader(60, thread_options(3, false), dataset);
  std::atomic<bool> done{false};
  std::int64_t max_loads = 0;
  std::thread reader([&] {
    while (!done.load()) max_loads = std::max(max_loads, loader->counters().dataset_loads);
  });
  for (int epoch = 0; epoch < 3; ++epoch) run_epoch(*loader);
  done.store(true);
  reader.join();
  EXPECT_LE(max_loads, 9);
  EXPECT_EQ(loader->counters().dataset_loads, 9);
}

/// The pin-memory thread reads the pool and sends the main thread's tasks while the main
/// thread takes batches, resets epochs and finally shuts down mid-epoch. Its pin function here
/// makes no tensor (no LibTorch op), so ThreadSanitizer sees every shared access.
TEST(ThreadBackend, PinMemoryThreadSharesNothingUnlockedWithTheTrainingThread) {
  constexpr std::int64_t kSize = 60;
  constexpr int kEpochs = 3;
  std::atomic<std::int64_t> pinned{0};
  DataLoaderOptions options = thread_options(3, true);
  options.pin_memory = true;
  auto loader = synthetic_loader(kSize, options);
  loader->set_pin_memory_function([&pinned](RawBatch&& raw) {
    ++pinned;
    Batch batch;
    batch.indices = std::move(raw.indices);
    return batch;
  });
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    std::vector<std::int64_t> seen;
    auto it = loader->iter();
    while (std::optional<Batch> batch = it->next()) {
      seen.insert(seen.end(), batch->indices.begin(), batch->indices.end());
    }
    expect_every_sample_once(seen, kSize, epoch);
  }
  EXPECT_EQ(pinned.load(), kEpochs * kSize / options.batch_size);
  auto it = loader->iter();
  ASSERT_TRUE(it->next());
  loader->iterator() = nullptr;  // shut down with tasks in flight and the thread reading
  it.reset();
  EXPECT_EQ(loader->counters().worker_spawns, 3);
}

TEST(EventLog, TakesRecordsAndReadsFromManyThreadsAtOnce) {
  trace::EventLog log;
  constexpr int kThreads = 4;
  constexpr int kEvents = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < kEvents; ++i) {
        trace::Event event;
        event.kind = trace::EventKind::dataset_loaded;
        event.worker_id = t;
        event.time_s = trace::monotonic_now_s();
        log.record(event);
        if (i % 100 == 0) log.set_context({i, "fit", "train"});
      }
    });
  }
  std::size_t seen = 0;
  while (seen < static_cast<std::size_t>(kThreads * kEvents)) seen = log.events().size();
  for (std::thread& thread : threads) thread.join();
  std::vector<int> per_thread(kThreads, 0);
  for (const trace::Event& event : log.events()) ++per_thread[static_cast<std::size_t>(event.worker_id)];
  EXPECT_EQ(per_thread, std::vector<int>(kThreads, kEvents));
}

}  // namespace
}  // namespace dlreset::data
