// DistributedSampler: each rank's shard of an epoch, as torch 1.13 draws it (the oracle suite
// compares the shards with real torch's), and a persistent loader that follows set_epoch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "harness/data/core/datasets/synthetic_dataset.h"
#include "harness/data/core/errors.h"
#include "harness/data/data_loader.h"
#include "harness/data/distributed_sampler.h"
#include "tests/support/fixtures.h"

namespace dlreset::data {
namespace {

using ::dlreset::testing::start_method_name;
using ::testing::HasSubstr;

/// How often each index appears in the shards of every rank, for one epoch.
std::map<std::int64_t, int> appearances(std::int64_t size, DistributedSamplerOptions options, std::int64_t epoch) {
  std::map<std::int64_t, int> seen;
  for (std::int64_t rank = 0; rank < options.num_replicas; ++rank) {
    options.rank = rank;
    DistributedSampler sampler(size, options);
    sampler.set_epoch(epoch);
    const std::vector<std::int64_t> shard = sampler.epoch_order();
    EXPECT_EQ(static_cast<std::int64_t>(shard.size()), sampler.size()) << "rank " << rank;
    for (const std::int64_t index : shard) ++seen[index];
  }
  return seen;
}

TEST(DistributedSampler, ShardsOfAnEpochCoverTheDatasetAndPadWithItsFirstIndices) {
  DistributedSamplerOptions options;
  options.num_replicas = 4;
  options.seed = 3;
  const std::map<std::int64_t, int> seen = appearances(37, options, 0);  // 40 = 37 + 3 repeated
  ASSERT_EQ(seen.size(), 37u) << "every index of the dataset is in some shard";
  int twice = 0;
  for (const auto& [index, count] : seen) {
    ASSERT_GE(index, 0);
    ASSERT_LT(index, 37);
    ASSERT_LE(count, 2) << "index " << index;
    twice += count == 2 ? 1 : 0;
  }
  EXPECT_EQ(twice, 3) << "the padding repeats as many indices as the shards lack";
  // The padding is the permutation's first indices: the first three of rank order 0, 1, 2, 3...
  options.rank = 0;
  DistributedSampler rank0(37, options);
  EXPECT_EQ(seen.at(rank0.epoch_order().front()), 2);
}

TEST(DistributedSampler, DropLastCutsTheTailSoNoIndexRepeats) {
  DistributedSamplerOptions options;
  options.num_replicas = 4;
  options.drop_last = true;
  options.rank = 0;
  EXPECT_EQ(DistributedSampler(37, options).size(), 9) << "ceil((37 - 4) / 4)";
  const std::map<std::int64_t, int> seen = appearances(37, options, 0);
  EXPECT_EQ(seen.size(), 36u);
  for (const auto& [index, count] : seen) EXPECT_EQ(count, 1) << "index " << index;
}

TEST(DistributedSampler, PadsByRepeatingTheWholeListWhenTheReplicasOutnumberTheSamples) {
  DistributedSamplerOptions options;
  options.num_replicas = 8;
  options.shuffle = false;
  std::vector<std::int64_t> firsts;
  for (std::int64_t rank = 0; rank < 8; ++rank) {
    options.rank = rank;
    const std::vector<std::int64_t> shard = DistributedSampler(3, options).epoch_order();
    ASSERT_EQ(shard.size(), 1u);
    firsts.push_back(shard.front());
  }
  EXPECT_EQ(firsts, (std::vector<std::int64_t>{0, 1, 2, 0, 1, 2, 0, 1}));
}

TEST(DistributedSampler, TheOrderChangesWithSetEpochAloneAndNotBetweenCalls) {
  DistributedSamplerOptions options;
  options.num_replicas = 2;
  options.rank = 1;
  options.seed = 11;
  DistributedSampler sampler(50, options);
  const std::vector<std::int64_t> epoch0 = sampler.epoch_order();
  EXPECT_EQ(sampler.epoch_order(), epoch0) << "no set_epoch: the same order, as in torch";
  sampler.set_epoch(1);
  const std::vector<std::int64_t> epoch1 = sampler.epoch_order();
  EXPECT_NE(epoch1, epoch0);
  sampler.set_epoch(0);
  EXPECT_EQ(sampler.epoch_order(), epoch0);
  options.seed = 12;
  EXPECT_NE(DistributedSampler(50, options).epoch_order(), epoch0) << "the seed matters";
}

TEST(DistributedSampler, RefusesARankOutsideTheJobWithTorchsWords) {
  DistributedSamplerOptions options;
  options.num_replicas = 2;
  options.rank = 2;
  EXPECT_THAT([&] { DistributedSampler(10, options); }, ::testing::ThrowsMessage<DataLoaderError>(HasSubstr(
                                                            "Invalid rank 2, rank should be in the interval [0, 1]")));
  options.rank = 0;
  options.num_replicas = 0;
  EXPECT_THAT([&] { DistributedSampler(10, options); },
              ::testing::ThrowsMessage<DataLoaderError>(HasSubstr("num_replicas=0")));
}

TEST(DistributedSampler, ALoaderRefusesShuffleBesideIt) {
  DataLoaderOptions options;
  options.shuffle = true;
  DistributedSamplerOptions shard;
  EXPECT_THAT(
      [&] {
        DataLoader(std::make_shared<SyntheticDataset>(SyntheticDatasetOptions{}), options,
                   std::make_unique<DistributedSampler>(10, shard));
      },
      ::testing::ThrowsMessage<DataLoaderError>(HasSubstr("sampler option is mutually exclusive with shuffle")));
}

class DistributedLoader : public ::testing::TestWithParam<StartMethod> {};

/// A persistent loader with 2 workers over `size` synthetic samples, reading `shard` of them.
std::unique_ptr<DataLoader> persistent_loader(std::int64_t size, const DistributedSamplerOptions& shard,
                                              StartMethod method) {
  DataLoaderOptions options;
  options.batch_size = 4;
  options.num_workers = 2;
  options.persistent_workers = true;
  options.start_method = method;
  SyntheticDatasetOptions samples;
  samples.size = size;
  return std::make_unique<DataLoader>(std::make_shared<SyntheticDataset>(samples), options,
                                      std::make_unique<DistributedSampler>(size, shard));
}

/// A persistent iterator primes its workers with the epoch's first batches at `iter()`: the
/// order must be the one set_epoch asked for before it, never the previous epoch's.
TEST_P(DistributedLoader, PersistentWorkersServeTheOrderSetEpochAskedFor) {
  constexpr std::int64_t kSize = 60;
  constexpr int kEpochs = 3;
  DistributedSamplerOptions shard;
  shard.num_replicas = 2;
  shard.rank = 1;
  shard.seed = 5;
  auto loader = persistent_loader(kSize, shard, GetParam());
  auto& sampler = dynamic_cast<DistributedSampler&>(loader->sampler());
  DistributedSampler twin(kSize, shard);
  std::vector<std::vector<std::int64_t>> orders;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    sampler.set_epoch(epoch);
    twin.set_epoch(epoch);
    std::vector<std::int64_t> seen;
    auto it = loader->iter();
    while (std::optional<RawBatch> batch = dynamic_cast<BaseDataLoaderIter&>(*it).next_raw()) {
      seen.insert(seen.end(), batch->indices.begin(), batch->indices.end());
    }
    EXPECT_EQ(seen, twin.epoch_order()) << "epoch " << epoch;
    orders.push_back(seen);
  }
  EXPECT_NE(orders[1], orders[0]);
  EXPECT_NE(orders[2], orders[1]);
  EXPECT_EQ(loader->counters().worker_spawns, 2);
}

/// The hazard of the late set_epoch check: set_epoch after `iter()` comes too late for that epoch, whose
/// order the iterator drew when it primed its workers.
TEST_P(DistributedLoader, SetEpochAfterIterComesTooLateForThatEpoch) {
  constexpr std::int64_t kSize = 40;
  DistributedSamplerOptions shard;
  shard.num_replicas = 2;
  shard.rank = 0;
  auto loader = persistent_loader(kSize, shard, GetParam());
  auto& sampler = dynamic_cast<DistributedSampler&>(loader->sampler());
  DistributedSampler epoch0(kSize, shard);
  auto it = loader->iter();
  sampler.set_epoch(1);
  std::vector<std::int64_t> seen;
  while (std::optional<RawBatch> batch = dynamic_cast<BaseDataLoaderIter&>(*it).next_raw()) {
    seen.insert(seen.end(), batch->indices.begin(), batch->indices.end());
  }
  EXPECT_EQ(seen, epoch0.epoch_order());
}

INSTANTIATE_TEST_SUITE_P(StartMethods, DistributedLoader, ::testing::Values(StartMethod::thread, StartMethod::fork),
                         start_method_name);

}  // namespace
}  // namespace dlreset::data
