// Recycles the blocks that hold a batch's features, labels or index list in the main process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "harness/data/core/memory/block_source.h"

namespace dlreset::data::detail {

/// How much a BlockPool keeps: blocks are freed once either limit would be passed.
struct BlockPoolLimits {
  /// A worker has `prefetch_factor` (2) batches in flight, and the consumer holds one or two more.
  std::size_t blocks = 8;
  /// 64 MiB: 8 batches of 64 images are 1.6 MB, but 8 of 8192 would be 205 MB a worker, kept
  /// for the rest of the run although the shared-memory slots carry such batches.
  std::size_t bytes = std::size_t{64} << 20;
};

/// Keeps the blocks of batches that were freed, to hold the next batches of the same size. A
/// pool holds one kind of block: a batch's features, its labels or its index list each come
/// from a pool of their own.
///
/// With process workers every batch arrives in a fresh 200 KB block (batch size 64) and leaves
/// with the tensor that adopted it. glibc hands such blocks back to the kernel when they free
/// the top of the heap, so with four workers the main process took 4 to 11 page faults a batch
/// (BM_LoaderEpoch's main_minor_faults_per_batch). Reusing the blocks of the last few batches
/// takes that allocation off the kernel's path. Any thread may free a block (a tensor dies where its last
/// user drops it), hence the lock. A block lent to a tensor (lend) comes back when the tensor
/// dies; its loan lies in a header before the block, so lending allocates nothing. A pool
/// lends only while a shared_ptr owns it, which the loan then shares.
class BlockPool : public BlockSource, public std::enable_shared_from_this<BlockPool> {
 public:
  explicit BlockPool(BlockPoolLimits limits = {});
  ~BlockPool() override;
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  /// A kept block of exactly `bytes`, or a new one.
  void* allocate(std::size_t bytes) override;
  /// Keeps the block for a later allocate(), or frees it when keeping it would pass a limit.
  void deallocate(void* block, std::size_t bytes) noexcept override;
  BlockLoan* lend(void* block, std::size_t bytes) noexcept override;

  /// Blocks that allocate() had to take from the heap.
  std::int64_t fresh_allocations() const;
  /// Blocks that allocate() handed out again.
  std::int64_t reuses() const;
  /// Free blocks kept now, and their bytes.
  std::size_t kept() const;
  std::size_t kept_bytes() const;

 protected:
  void give_back(BlockLoan& loan) noexcept override;

 private:
  struct Header;
  /// Bytes before each block: its Header, padded to 64 so that the block keeps the alignment
  /// that operator new gave the allocation.
  static constexpr std::size_t kHeaderBytes = 64;
  static Header& header_of(void* block) noexcept;
  /// Frees a block and its header for good.
  static void free_block(void* block, std::size_t bytes) noexcept;

  mutable std::mutex mutex_;
  /// (size in bytes, block); capacity reserved up front, so deallocate() never allocates.
  std::vector<std::pair<std::size_t, void*>> kept_;
  std::size_t kept_bytes_ = 0;
  BlockPoolLimits limits_;
  std::int64_t fresh_allocations_ = 0;
  std::int64_t reuses_ = 0;
};

}  // namespace dlreset::data::detail
