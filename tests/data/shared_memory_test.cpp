// Batches from worker processes arrive in shared-memory slots: collated there by the worker,
// adopted there by the tensor, and freed when the tensor dies. Counted, never timed.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <ATen/ops/arange.h>
#include <ATen/ops/equal.h>

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

#include "harness/data/core/datasets/synthetic_dataset.h"
#include "harness/data/core/worker/transport/shared_slots.h"
#include "harness/data/data_loader.h"
#include "harness/data/multi_processing_dataloader_iter.h"
#include "tests/support/fixtures.h"

namespace dlreset::data {
namespace {

using Clock = std::chrono::steady_clock;

/// Fashion-MNIST's shape: 3136 bytes of features a sample.
const SampleShape kImage = {1, 28, 28};

DataLoaderOptions options_for(StartMethod method, std::int64_t batch_size, int workers) {
  DataLoaderOptions options;
  options.name = "shm";
  options.batch_size = batch_size;
  options.num_workers = workers;
  options.start_method = method;
  return options;
}

SyntheticDatasetOptions images() {
  SyntheticDatasetOptions samples;
  samples.sample_shape = kImage;
  return samples;
}

MultiProcessingDataLoaderIter& workers_of(BatchIterator& it) {
  return dynamic_cast<MultiProcessingDataLoaderIter&>(it);
}

/// Every sample's first feature is its index (SyntheticDataset): the batch's features are the
/// ones its worker wrote for these indices, and its indices and labels came with them.
void expect_batch_holds_its_samples(const Batch& batch) {
  const at::Tensor first = batch.inputs.reshape({batch.size(), -1}).select(1, 0);
  for (std::int64_t j = 0; j < batch.size(); ++j) {
    const std::int64_t index = batch.indices[static_cast<std::size_t>(j)];
    ASSERT_EQ(first[j].item<float>(), static_cast<float>(index)) << "row " << j;
    ASSERT_EQ(batch.targets[j].item<std::int64_t>(), index % 10) << "row " << j;
  }
}

TEST(SharedSlots, HandsOutTheMostRecentlyFreedSlotFirst) {
  auto slots = detail::SharedSlots::create(3, 4096, "test");
  EXPECT_EQ(slots->acquire(), 0);
  EXPECT_EQ(slots->acquire(), 1);
  EXPECT_EQ(slots->in_use(), 2);
  slots->release(0);
  EXPECT_EQ(slots->acquire(), 0) << "a freed slot's pages are already there";
  EXPECT_EQ(slots->acquire(), 2);
  EXPECT_EQ(slots->acquire(), -1) << "all three are held";
  EXPECT_EQ(slots->in_use(), 3);
}

TEST(SharedSlots, BuffersOverASlotFreeItWhenBothHaveDiedAndTheirCopiesUseTheHeap) {
  auto slots = detail::SharedSlots::create(2, 4096, "test");
  const int index = slots->acquire();
  const detail::SlotLayout layout{4, 8};
  float* in_place = reinterpret_cast<float*>(slots->slot(index) + layout.features_offset());
  auto* labels_in_place = reinterpret_cast<std::int64_t*>(slots->slot(index) + layout.labels_offset());
  for (int i = 0; i < 32; ++i) in_place[i] = static_cast<float>(i);
  for (int i = 0; i < 4; ++i) labels_in_place[i] = 10 + i;
  BatchBlocks blocks = slots->hand_over(index, layout);
  std::optional<LabelBuffer> labels(std::in_place, 4, LabelBuffer::allocator_type(blocks.labels));
  {
    FeatureBuffer features(32, FeatureBuffer::allocator_type(blocks.features));
    EXPECT_EQ(features.data(), in_place) << "the features must stay where the worker wrote them";
    EXPECT_EQ(labels->data(), labels_in_place) << "the labels must stay where the worker wrote them";
    EXPECT_EQ(features[31], 31.0f);
    EXPECT_EQ((*labels)[3], 13);
    FeatureBuffer copy = features;
    EXPECT_NE(copy.data(), in_place);
    EXPECT_EQ(copy[31], 31.0f);
    EXPECT_EQ(slots->in_use(), 1);
  }
  EXPECT_EQ(slots->in_use(), 1) << "the labels still lie in the slot";
  labels.reset();
  EXPECT_EQ(slots->in_use(), 0);
}

TEST(SharedSlots, APartLentOnOutlivesItsBufferAndKeepsTheMappingUntilItIsGivenBack) {
  auto slots = detail::SharedSlots::create(2, 4096, "test");
  const std::weak_ptr<detail::SharedSlots> mapping = slots;
  const int index = slots->acquire();
  const detail::SlotLayout layout{4, 8};
  BatchBlocks blocks = slots->hand_over(index, layout);
  BlockSource* labels_source = blocks.labels.get();
  BlockSource* features_source = blocks.features.get();
  BlockLoan* labels_loan = nullptr;
  BlockLoan* features_loan = nullptr;
  {
    LabelBuffer labels(4, LabelBuffer::allocator_type(std::move(blocks.labels)));
    FeatureBuffer features(32, FeatureBuffer::allocator_type(std::move(blocks.features)));
    EXPECT_EQ(features_source->lend(labels.data(), 32), nullptr) << "a part lends only its own block";
    labels_loan = labels_source->lend(labels.data(), 32);
    features_loan = features_source->lend(features.data(), 128);
    ASSERT_NE(labels_loan, nullptr);
    ASSERT_NE(features_loan, nullptr);
    EXPECT_EQ(features_source->lend(features.data(), 128), nullptr) << "a block is lent once";
  }
  EXPECT_EQ(slots->in_use(), 1) << "the buffers died, but both parts are on loan";
  slots.reset();
  EXPECT_FALSE(mapping.expired()) << "a loan must keep the slots mapped";
  BlockSource::end_loan(labels_loan);
  EXPECT_EQ(mapping.lock()->in_use(), 1);
  BlockSource::end_loan(features_loan);
  EXPECT_TRUE(mapping.expired()) << "the last loan given back was the last owner";
}

class SharedMemoryBatches : public ::testing::TestWithParam<StartMethod> {};

TEST_P(SharedMemoryBatches, ArriveInSlotsThatTheirTensorsFreeWhenTheyDie) {
  auto loader = testing::synthetic_loader(640, options_for(GetParam(), 64, 2), images());
  auto it = loader->iter();
  std::int64_t batches = 0;
  while (std::optional<Batch> batch = it->next()) {
    expect_batch_holds_its_samples(*batch);
    ++batches;
  }
  EXPECT_EQ(batches, 10);
  EXPECT_EQ(workers_of(*it).stats().transport.batches_in_slots, 10);
  EXPECT_EQ(workers_of(*it).stats().transport.batches_without_a_slot, 0);
  EXPECT_EQ(workers_of(*it).stats().transport.slots_in_use, 0);
  // Every task went to its worker, and every batch came back, on the slots' rings.
  EXPECT_EQ(workers_of(*it).stats().transport.ring_descriptors, 2 * 10);
}

/// The worker's load report goes over its socket, the batch it loaded for on the answer ring,
/// in that order: the main process hands on the report before the batch, whichever came first.
TEST_P(SharedMemoryBatches, AWorkersLoadReportComesBeforeTheBatchItLoadedFor) {
  SyntheticDatasetOptions dataset = images();
  dataset.load_work = 1000;  // the worker's copy loads at its first sample
  auto loader = testing::synthetic_loader(64, options_for(GetParam(), 8, 1), dataset);
  auto it = loader->iter();
  const std::optional<Batch> first = it->next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(loader->counters().dataset_loads, 1) << "the batch was handed on before its worker's load report";
  EXPECT_EQ(workers_of(*it).stats().transport.batches_in_slots, 1);
  while (it->next()) {
  }
  EXPECT_EQ(loader->counters().dataset_loads, 1);
  EXPECT_EQ(workers_of(*it).stats().transport.ring_descriptors, 2 * 8);
}

/// Slots per worker: prefetch_factor (2) in flight and 2 held by the consumer. A consumer that
/// keeps all 16 batches of an epoch holds every slot, so each worker's last 4 of its 8 batches
/// travel in their message: 3.2 MB frames, larger than any socket buffer.
TEST_P(SharedMemoryBatches, BatchesHeldBeyondTheSlotsTravelInTheirMessage) {
  constexpr std::int64_t kBatch = 1024;
  auto loader = testing::synthetic_loader(16 * kBatch, options_for(GetParam(), kBatch, 2), images());
  auto it = loader->iter();
  std::vector<Batch> held;
  while (std::optional<Batch> batch = it->next()) held.push_back(std::move(*batch));
  ASSERT_EQ(held.size(), 16u);
  for (const Batch& batch : held) expect_batch_holds_its_samples(batch);
  EXPECT_EQ(workers_of(*it).stats().transport.batches_in_slots, 8);
  EXPECT_EQ(workers_of(*it).stats().transport.batches_without_a_slot, 8);
  EXPECT_EQ(workers_of(*it).stats().transport.slots_in_use, 8);
  // Only the tasks that had a slot, and their batches, took the rings.
  EXPECT_EQ(workers_of(*it).stats().transport.ring_descriptors, 2 * 8);
  held.clear();
  EXPECT_EQ(workers_of(*it).stats().transport.slots_in_use, 0);
}

/// The largest batch `--batch-size` allows: 60000 Fashion-MNIST-sized samples, 188 MB, one
/// slot a worker (kMaxSlotBytesPerWorker), with 2 workers.
TEST_P(SharedMemoryBatches, BatchSizeSixtyThousandWithTwoWorkers) {
  constexpr std::int64_t kBatch = 60'000;
  auto loader = testing::synthetic_loader(2 * kBatch, options_for(GetParam(), kBatch, 2), images());
  auto it = loader->iter();
  std::int64_t samples = 0;
  while (std::optional<Batch> batch = it->next()) {
    ASSERT_EQ(batch->size(), kBatch);
    const at::Tensor first = batch->inputs.reshape({kBatch, -1}).select(1, 0);
    EXPECT_TRUE(at::equal(first, at::arange(samples, samples + kBatch, first.options())));
    samples += batch->size();
  }
  EXPECT_EQ(samples, 2 * kBatch);
  EXPECT_EQ(workers_of(*it).stats().transport.batches_in_slots, 2);
  EXPECT_EQ(workers_of(*it).stats().transport.batches_without_a_slot, 0);
}

/// A ring's descriptor holds up to six sizes of a sample; the batch of a sample of seven dims
/// still lies in its slot, but is announced over the socket, in a message that carries the
/// whole shape. A spawned worker learns the shape from the dataset's spec.
TEST_P(SharedMemoryBatches, ASampleOfMoreDimsThanADescriptorHoldsIsAnnouncedOverTheSocket) {
  SyntheticDatasetOptions dataset;
  dataset.sample_shape = {1, 1, 2, 1, 1, 2, 2};
  auto loader = testing::synthetic_loader(40, options_for(GetParam(), 8, 2), dataset);
  auto it = loader->iter();
  std::int64_t batches = 0;
  while (std::optional<Batch> batch = it->next()) {
    EXPECT_EQ(batch->inputs.sizes().vec(), (std::vector<std::int64_t>{8, 1, 1, 2, 1, 1, 2, 2}));
    expect_batch_holds_its_samples(*batch);
    ++batches;
  }
  EXPECT_EQ(batches, 5);
  EXPECT_EQ(workers_of(*it).stats().transport.batches_in_slots, 5);
  EXPECT_EQ(workers_of(*it).stats().transport.batches_without_a_slot, 0);
  EXPECT_EQ(workers_of(*it).stats().transport.ring_descriptors, 5)
      << "the tasks only: no batch came on the answer ring";
}

INSTANTIATE_TEST_SUITE_P(ProcessBackends, SharedMemoryBatches, ::testing::Values(StartMethod::fork, StartMethod::spawn),
                         testing::start_method_name);

/// Counts the samples its fork workers fetched, in memory they share with the test.
class CountingDataset : public SyntheticDataset {
 public:
  CountingDataset(SyntheticDatasetOptions options, std::atomic<std::int64_t>* fetched)
      : SyntheticDataset(options), fetched_(fetched) {}
  std::int64_t get(std::int64_t index, float* features) override {
    const std::int64_t label = SyntheticDataset::get(index, features);
    fetched_->fetch_add(1);
    return label;
  }
  std::unique_ptr<Dataset> clone() const override { return std::make_unique<CountingDataset>(options(), fetched_); }

 private:
  std::atomic<std::int64_t>* fetched_;
};

/// Waits, as a guard against a hang and not as a measurement, until `fetched` reaches
/// `expected` or 30 s pass; returns what it reached.
std::int64_t wait_for_fetched(const std::atomic<std::int64_t>& fetched, std::int64_t expected) {
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (fetched.load() < expected && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return fetched.load();
}

struct Transport {
  StartMethod method;
  bool shared_memory;
};

std::string transport_name(const ::testing::TestParamInfo<Transport>& info) {
  const std::string method = to_string(info.param.method);
  return info.param.method == StartMethod::thread ? method : method + (info.param.shared_memory ? "_shm" : "_socket");
}

class SteadyState : public ::testing::TestWithParam<Transport> {};

/// 3 persistent epochs of 40 batches, each dropped before the next: a worker has at most
/// prefetch_factor batches in flight and the consumer holds at most 2, so the batch-sized
/// blocks taken from the heap stay within (prefetch_factor + 2) a worker, where a block per
/// batch would be 120. In slots, there are none at all.
TEST_P(SteadyState, TakesNoBatchSizedBlockFromTheHeapPerBatch) {
  constexpr int kWorkers = 2;
  constexpr int kEpochs = 3;
  constexpr std::int64_t kBatches = 40;
  DataLoaderOptions options = options_for(GetParam().method, 64, kWorkers);
  options.persistent_workers = true;
  options.shared_memory = GetParam().shared_memory;
  auto loader = testing::synthetic_loader(kBatches * 64, options, images());
  std::int64_t batches = 0;
  std::shared_ptr<BatchIterator> it;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    it = loader->iter();
    while (std::optional<Batch> batch = it->next()) ++batches;
  }
  ASSERT_EQ(batches, kEpochs * kBatches);
  const std::int64_t allocated = workers_of(*it).stats().transport.feature_blocks_allocated;
  if (GetParam().shared_memory && GetParam().method != StartMethod::thread) {
    EXPECT_EQ(allocated, 0);
    EXPECT_EQ(workers_of(*it).stats().transport.batches_in_slots, kEpochs * kBatches);
  } else {
    EXPECT_GE(allocated, 1);
    EXPECT_LE(allocated, (options.prefetch_factor + 2) * kWorkers);
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, SteadyState,
                         ::testing::Values(Transport{StartMethod::thread, true}, Transport{StartMethod::fork, true},
                                           Transport{StartMethod::fork, false}, Transport{StartMethod::spawn, true},
                                           Transport{StartMethod::spawn, false}),
                         transport_name);

/// PyTorch's workers finish their prefetch_factor batches whatever the consumer does. With
/// 3.2 MB batches sent through the socket, each worker finished one and then blocked sending
/// it until the consumer asked; in shared memory all four are done while it waits, and no
/// fifth is started before it takes one.
TEST(SharedMemoryPrefetch, WorkersFinishPrefetchFactorTimesWorkersBatchesWhileTheConsumerWaits) {
  constexpr std::int64_t kBatch = 1024;
  constexpr int kWorkers = 2;
  constexpr int kPrefetch = 2;
  void* shared =
      ::mmap(nullptr, sizeof(std::atomic<std::int64_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* fetched = new (shared) std::atomic<std::int64_t>(0);
  {
    SyntheticDatasetOptions samples = images();
    samples.size = 16 * kBatch;
    DataLoaderOptions options = options_for(StartMethod::fork, kBatch, kWorkers);
    options.prefetch_factor = kPrefetch;
    DataLoader loader(std::make_shared<CountingDataset>(samples, fetched), options);
    auto it = loader.iter();
    const std::int64_t in_flight = kPrefetch * kWorkers * kBatch;
    EXPECT_EQ(wait_for_fetched(*fetched, in_flight), in_flight);
    EXPECT_EQ(workers_of(*it).stats().tasks_outstanding, kPrefetch * kWorkers);
    ASSERT_TRUE(it->next().has_value());  // frees one task: exactly one more is sent
    EXPECT_EQ(wait_for_fetched(*fetched, in_flight + kBatch), in_flight + kBatch);
    EXPECT_EQ(workers_of(*it).stats().tasks_outstanding, kPrefetch * kWorkers);
  }
  ::munmap(shared, sizeof(std::atomic<std::int64_t>));
}

}  // namespace
}  // namespace dlreset::data
