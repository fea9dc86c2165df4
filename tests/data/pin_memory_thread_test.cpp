// The pin-memory thread: batches pinned off the training thread as they arrive, in order, and
// the thread stopped before the workers. A pin function of the test's own stands in for CUDA's
// page-locked copy, so every case runs on a machine without a GPU. Counted, never timed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "harness/data/collate.h"
#include "harness/data/core/errors.h"
#include "harness/data/data_loader.h"
#include "harness/data/multi_processing_dataloader_iter.h"
#include "harness/trace/event_log.h"
#include "tests/support/fixtures.h"

namespace dlreset::data {
namespace {

using ::dlreset::testing::start_method_name;
using ::dlreset::testing::synthetic_loader;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

/// How long a test waits for a count it expects before it fails: far above what the pin
/// thread needs (a spawned worker's start-up is 0.5 s here), so it bounds a hang, not a speed.
constexpr std::chrono::seconds kCountDeadline{20};

constexpr std::int64_t kSamples = 40;
constexpr std::int64_t kBatch = 4;
constexpr std::int64_t kBatchesPerEpoch = kSamples / kBatch;

DataLoaderOptions pinning_options(StartMethod method, int workers) {
  DataLoaderOptions options = testing::worker_loader_options("pinned", method, workers, /*persistent=*/true, kBatch);
  options.seed = 7;
  options.pin_memory = true;
  return options;
}

/// Stands in for the page-locked copy: collates, and notes who called it and for which samples.
class CountingPin {
 public:
  PinMemoryFunction function() {
    return [this](RawBatch&& raw) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        threads_.insert(std::this_thread::get_id());
        ++calls_;
        if (throw_for_index_ >= 0) {
          for (const std::int64_t index : raw.indices) {
            if (index == throw_for_index_) throw std::runtime_error("no page-locked memory left");
          }
        }
      }
      return collate(std::move(raw), /*pin_memory=*/false);
    };
  }
  std::int64_t calls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  std::set<std::thread::id> threads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return threads_;
  }
  void throw_for(std::int64_t index) { throw_for_index_ = index; }

 private:
  mutable std::mutex mutex_;
  std::set<std::thread::id> threads_;
  std::int64_t calls_ = 0;
  std::int64_t throw_for_index_ = -1;
};

/// One epoch through next(), the one way a pinning iterator hands batches out: its indices in
/// the order they came.
std::vector<std::int64_t> run_epoch_through_next(DataLoader& loader) {
  std::vector<std::int64_t> seen;
  auto it = loader.iter();
  while (std::optional<Batch> batch = it->next()) {
    seen.insert(seen.end(), batch->indices.begin(), batch->indices.end());
  }
  return seen;
}

MultiProcessingDataLoaderIter& workers_of(BatchIterator& it) {
  return dynamic_cast<MultiProcessingDataLoaderIter&>(it);
}

/// Waits until `count()` reaches `expected` or the deadline passes, and returns the last count.
template <typename Count>
std::int64_t wait_for_count(Count count, std::int64_t expected) {
  const auto deadline = Clock::now() + kCountDeadline;
  std::int64_t seen = count();
  while (seen < expected && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    seen = count();
  }
  return seen;
}

class PinMemoryThreadTest : public ::testing::TestWithParam<StartMethod> {};

TEST_P(PinMemoryThreadTest, PinsEveryBatchOnceOffTheTrainingThreadAndKeepsTheOrder) {
  constexpr int kEpochs = 3;
  CountingPin pin;
  auto pinned = synthetic_loader(kSamples, pinning_options(GetParam(), 2));
  pinned->set_pin_memory_function(pin.function());
  DataLoaderOptions plain_options = pinning_options(GetParam(), 2);
  plain_options.pin_memory = false;
  auto plain = synthetic_loader(kSamples, plain_options);
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    EXPECT_EQ(run_epoch_through_next(*pinned), run_epoch_through_next(*plain)) << "epoch " << epoch;
  }
  EXPECT_EQ(pin.calls(), kEpochs * kBatchesPerEpoch);
  const std::set<std::thread::id> threads = pin.threads();
  ASSERT_EQ(threads.size(), 1u) << "one pin-memory thread, kept with the persistent iterator";
  EXPECT_NE(*threads.begin(), std::this_thread::get_id()) << "batches were pinned on the training thread";
  const auto* thread = workers_of(*pinned->iterator().get()).pin_memory_thread();
  ASSERT_NE(thread, nullptr);
  EXPECT_EQ(thread->batches_pinned(), kEpochs * kBatchesPerEpoch);
  EXPECT_EQ(pinned->counters().worker_spawns, 2) << "pinning must not cost the workers";
}

TEST_P(PinMemoryThreadTest, PinsPrefetchedBatchesWhileTheConsumerWaits) {
  constexpr int kWorkers = 2;
  constexpr int kPrefetch = 2;
  CountingPin pin;
  DataLoaderOptions options = pinning_options(GetParam(), kWorkers);
  options.prefetch_factor = kPrefetch;
  auto loader = synthetic_loader(kSamples, options);
  loader->set_pin_memory_function(pin.function());
  auto it = loader->iter();
  // Nobody asks for a batch, yet every batch in flight is pinned, and no more than those.
  EXPECT_EQ(wait_for_count([&] { return pin.calls(); }, kPrefetch * kWorkers), kPrefetch * kWorkers);
  EXPECT_EQ(workers_of(*it).stats().tasks_outstanding, kPrefetch * kWorkers);
  ASSERT_TRUE(it->next());
  EXPECT_EQ(wait_for_count([&] { return pin.calls(); }, kPrefetch * kWorkers + 1), kPrefetch * kWorkers + 1)
      << "the task sent for the batch taken was not pinned";
}

TEST_P(PinMemoryThreadTest, StopsBeforeTheWorkersAreToldToExit) {
  CountingPin pin;
  auto loader = synthetic_loader(kSamples, pinning_options(GetParam(), 2));
  loader->set_pin_memory_function(pin.function());
  trace::EventLog::global().clear();
  auto it = loader->iter();
  ASSERT_TRUE(it->next());
  auto& iterator = workers_of(*it);
  iterator.shutdown_workers();  // mid-epoch, batches still in flight
  const double stopped_at = iterator.pin_memory_thread()->stopped_at_s();
  ASSERT_GT(stopped_at, 0.0) << "the pin-memory thread still runs after shutdown";
  int shutdowns = 0;
  for (const trace::Event& event : trace::EventLog::global().events()) {
    if (event.kind != trace::EventKind::worker_shutdown || event.loader != "pinned") continue;
    ++shutdowns;
    EXPECT_LE(stopped_at, event.time_s) << "worker " << event.worker_id << " was told to exit first";
  }
  EXPECT_EQ(shutdowns, 2);
}

TEST_P(PinMemoryThreadTest, APinFunctionThatThrowsIsRaisedInItsBatchsTurnWithItsWords) {
  CountingPin pin;
  pin.throw_for(2 * kBatch);  // the third batch of the unshuffled epoch
  DataLoaderOptions options = pinning_options(GetParam(), 2);
  options.shuffle = false;
  auto loader = synthetic_loader(kSamples, options);
  loader->set_pin_memory_function(pin.function());
  auto it = loader->iter();
  int delivered = 0;
  try {
    while (it->next()) ++delivered;
    FAIL() << "the pin function's error was lost";
  } catch (const DataLoaderError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Caught std::runtime_error in pin memory thread for device 0 of "
                                    "loader 'pinned'. Original message: no page-locked memory left"));
  }
  EXPECT_EQ(delivered, 2) << "batches before the failed one come first, in order";
}

TEST_P(PinMemoryThreadTest, NextRawSaysToCallNext) {
  CountingPin pin;
  auto loader = synthetic_loader(kSamples, pinning_options(GetParam(), 1));
  loader->set_pin_memory_function(pin.function());
  auto it = loader->iter();
  EXPECT_THAT([&] { workers_of(*it).next_raw(); },
              ::testing::ThrowsMessage<DataLoaderError>(HasSubstr("call next(), not next_raw()")));
}

TEST(PinMemory, IsOffWithoutCudaOrAFunctionAndOnTheMainThreadWithoutWorkers) {
  DataLoaderOptions options = pinning_options(StartMethod::thread, 1);
  auto without = synthetic_loader(kSamples, options);
  auto it = without->iter();
  if (!can_pin_memory()) {
    EXPECT_EQ(workers_of(*it).pin_memory_thread(), nullptr)
        << "PyTorch pins only where CUDA is present, or a pin device is given";
  }
  // With 0 workers PyTorch pins in `_next_data`, on the caller's thread: no thread to start.
  CountingPin pin;
  options.num_workers = 0;
  options.persistent_workers = false;
  auto single = synthetic_loader(kSamples, options);
  single->set_pin_memory_function(pin.function());
  run_epoch_through_next(*single);
  EXPECT_EQ(pin.calls(), kBatchesPerEpoch);
  EXPECT_EQ(pin.threads(), std::set<std::thread::id>{std::this_thread::get_id()});
}

INSTANTIATE_TEST_SUITE_P(AnyBackend, PinMemoryThreadTest,
                         ::testing::Values(StartMethod::thread, StartMethod::fork, StartMethod::spawn),
                         start_method_name);

}  // namespace
}  // namespace dlreset::data
