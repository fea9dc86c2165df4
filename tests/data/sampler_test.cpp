#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "harness/data/core/samplers/batch_sampler.h"
#include "harness/data/core/samplers/sequential_sampler.h"
#include "harness/data/random_sampler.h"

namespace dlreset::data {
namespace {

std::vector<std::int64_t> sorted(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(SequentialSampler, YieldsIndicesInOrder) {
  SequentialSampler sampler(5);
  EXPECT_EQ(sampler.epoch_order(), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
}

TEST(RandomSampler, EveryEpochIsAPermutationAndEpochsDiffer) {
  RandomSampler sampler(100, 7);
  std::vector<std::int64_t> all(100);
  std::iota(all.begin(), all.end(), 0);
  const auto first = sampler.epoch_order();
  const auto second = sampler.epoch_order();
  EXPECT_EQ(sorted(first), all);
  EXPECT_EQ(sorted(second), all);
  EXPECT_NE(first, second);
}

TEST(RandomSampler, SameSeedGivesSameSequenceOfEpochs) {
  RandomSampler a(50, 3);
  RandomSampler b(50, 3);
  RandomSampler c(50, 4);
  for (int epoch = 0; epoch < 3; ++epoch) {
    const auto order = a.epoch_order();
    EXPECT_EQ(order, b.epoch_order()) << "epoch " << epoch;
    EXPECT_NE(order, c.epoch_order()) << "epoch " << epoch;
  }
}

TEST(BatchSampler, KeepsOrDropsTheLastPartialBatch) {
  BatchSampler keep(std::make_unique<SequentialSampler>(10), 4, false);
  BatchSampler drop(std::make_unique<SequentialSampler>(10), 4, true);
  EXPECT_EQ(keep.size(), 3);
  EXPECT_EQ(drop.size(), 2);
  auto it = keep.iter();
  EXPECT_EQ(*it.next(), (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(*it.next(), (std::vector<std::int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(*it.next(), (std::vector<std::int64_t>{8, 9}));
  EXPECT_FALSE(it.next());
  auto dropping = drop.iter();
  dropping.next();
  dropping.next();
  EXPECT_FALSE(dropping.next());
}

}  // namespace
}  // namespace dlreset::data
