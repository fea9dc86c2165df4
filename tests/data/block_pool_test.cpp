#include "harness/data/core/memory/block_pool.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <utility>

#include "harness/data/collate.h"
#include "harness/data/core/memory/raw_batch.h"

namespace dlreset::data {
namespace {

constexpr std::size_t kBatchBytes = 64 * 784 * sizeof(float);

TEST(BlockPool, HandsAFreedBlockOutAgainForTheSameSize) {
  detail::BlockPool pool;
  void* first = pool.allocate(kBatchBytes);
  pool.deallocate(first, kBatchBytes);
  EXPECT_EQ(pool.kept(), 1u);
  void* second = pool.allocate(kBatchBytes);
  EXPECT_EQ(second, first);
  EXPECT_EQ(pool.fresh_allocations(), 1);
  EXPECT_EQ(pool.reuses(), 1);
  EXPECT_EQ(pool.kept(), 0u);
  pool.deallocate(second, kBatchBytes);
}

TEST(BlockPool, HandsOutNoBlockOfAnotherSize) {
  detail::BlockPool pool;
  void* full = pool.allocate(kBatchBytes);
  pool.deallocate(full, kBatchBytes);
  void* last = pool.allocate(kBatchBytes / 2);  // an epoch's last, shorter batch
  EXPECT_NE(last, full);
  EXPECT_EQ(pool.fresh_allocations(), 2);
  EXPECT_EQ(pool.reuses(), 0);
  pool.deallocate(last, kBatchBytes / 2);
  EXPECT_EQ(pool.kept(), 2u);
}

TEST(BlockPool, KeepsNoMoreBlocksThanItsLimit) {
  detail::BlockPoolLimits limits;
  limits.blocks = 2;
  detail::BlockPool pool(limits);
  void* blocks[5];
  for (void*& block : blocks) block = pool.allocate(kBatchBytes);
  for (void* block : blocks) pool.deallocate(block, kBatchBytes);
  EXPECT_EQ(pool.kept(), 2u);
  for (void*& block : blocks) block = pool.allocate(kBatchBytes);
  EXPECT_EQ(pool.reuses(), 2);
  EXPECT_EQ(pool.fresh_allocations(), 5 + 3);
  for (void* block : blocks) pool.deallocate(block, kBatchBytes);
}

/// Batches of 8192 images (25.7 MB each): the default 64 MiB keeps two of them, not eight.
TEST(BlockPool, KeepsNoMoreBytesThanItsLimit) {
  constexpr std::size_t kLargeBatchBytes = 8192 * 784 * sizeof(float);
  detail::BlockPool pool;
  void* blocks[5];
  for (void*& block : blocks) block = pool.allocate(kLargeBatchBytes);
  for (void* block : blocks) pool.deallocate(block, kLargeBatchBytes);
  EXPECT_EQ(pool.kept(), 2u);
  EXPECT_EQ(pool.kept_bytes(), 2 * kLargeBatchBytes);
  // A small block still fits beside them; the bound is on bytes, not on one block's size.
  void* small = pool.allocate(kBatchBytes);
  pool.deallocate(small, kBatchBytes);
  EXPECT_EQ(pool.kept(), 3u);
  for (void*& block : blocks) block = pool.allocate(kLargeBatchBytes);
  EXPECT_EQ(pool.reuses(), 2);
  EXPECT_EQ(pool.fresh_allocations(), 5 + 1 + 3);
  EXPECT_EQ(pool.kept_bytes(), kBatchBytes);
  for (void* block : blocks) pool.deallocate(block, kLargeBatchBytes);
}

TEST(BlockPool, LivesAsLongAsTheLastBufferTakenFromIt) {
  auto pool = std::make_shared<detail::BlockPool>();
  std::weak_ptr<detail::BlockPool> watch = pool;
  auto buffer = std::make_unique<FeatureBuffer>(64 * 784, FeatureBuffer::allocator_type(pool));
  pool.reset();  // the decoder that made the pool is gone; the batch is still in use
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(watch.lock()->fresh_allocations(), 1);
  buffer.reset();
  EXPECT_TRUE(watch.expired());
}

TEST(BlockPool, ATensorThatAdoptedABatchGivesItsBlockBackWhenItDies) {
  auto pool = std::make_shared<detail::BlockPool>();
  RawBatch raw;
  raw.indices = {0, 1};
  raw.labels = {3, 4};
  raw.sample_shape = {1, 28, 28};
  raw.features = FeatureBuffer(2 * 784, FeatureBuffer::allocator_type(pool));
  const float* block = raw.features.data();
  {
    Batch batch = collate(std::move(raw), /*pin_memory=*/false);
    EXPECT_EQ(batch.inputs.data_ptr<float>(), block);  // adopted, not copied
    EXPECT_EQ(pool->kept(), 0u);
  }
  EXPECT_EQ(pool->kept(), 1u);
  FeatureBuffer next(2 * 784, FeatureBuffer::allocator_type(pool));
  EXPECT_EQ(next.data(), block);
  EXPECT_EQ(pool->fresh_allocations(), 1);
  EXPECT_EQ(pool->reuses(), 1);
}

TEST(BlockPool, ALentBlockComesBackWhenItsLoanEndsNotWhenItsBufferDies) {
  auto pool = std::make_shared<detail::BlockPool>();
  BlockLoan* loan = nullptr;
  void* block = nullptr;
  {
    FeatureBuffer buffer(64 * 784, FeatureBuffer::allocator_type(pool));
    block = buffer.data();
    loan = pool->lend(buffer.data(), kBatchBytes);
    ASSERT_NE(loan, nullptr);
    EXPECT_EQ(loan->block, block);
    EXPECT_EQ(pool->lend(buffer.data(), kBatchBytes), nullptr) << "a block is lent once";
  }
  EXPECT_EQ(pool->kept(), 0u) << "the buffer died, but its block is on loan";
  BlockSource::end_loan(loan);
  EXPECT_EQ(pool->kept(), 1u);
  FeatureBuffer next(64 * 784, FeatureBuffer::allocator_type(pool));
  EXPECT_EQ(next.data(), block) << "a block given back is handed out again";
  EXPECT_EQ(pool->fresh_allocations(), 1);
}

TEST(BlockPool, ALoanKeepsItsPoolAliveAndAPoolNoPointerOwnsLendsNothing) {
  auto pool = std::make_shared<detail::BlockPool>();
  const std::weak_ptr<detail::BlockPool> watch = pool;
  BlockLoan* loan = nullptr;
  {
    FeatureBuffer buffer(64 * 784, FeatureBuffer::allocator_type(pool));
    loan = pool->lend(buffer.data(), kBatchBytes);
    ASSERT_NE(loan, nullptr);
  }
  pool.reset();
  EXPECT_FALSE(watch.expired()) << "the tensor's block must outlive the decoder's pool";
  BlockSource::end_loan(loan);
  EXPECT_TRUE(watch.expired());

  detail::BlockPool unowned;
  void* block = unowned.allocate(kBatchBytes);
  EXPECT_EQ(unowned.lend(block, kBatchBytes), nullptr) << "no shared_ptr for the loan to keep";
  unowned.deallocate(block, kBatchBytes);
  EXPECT_EQ(unowned.kept(), 1u);
}

TEST(BlockPool, BuffersWithoutAPoolUseTheHeap) {
  FeatureBuffer plain(16);
  EXPECT_EQ(plain.get_allocator().pool(), nullptr);
  FeatureBuffer moved = std::move(plain);
  EXPECT_EQ(moved.size(), 16u);
}

}  // namespace
}  // namespace dlreset::data
