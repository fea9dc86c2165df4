// Where the blocks that hold a batch's features and labels come from.
#pragma once

#include <cstddef>
#include <memory>

namespace dlreset::data {

class BlockSource;

/// A block that a BlockSource lent on (BlockSource::lend): where it goes back to. It lies in the
/// source's own memory, so lending allocates nothing.
struct BlockLoan {
  BlockSource* source = nullptr;
  void* block = nullptr;
  std::size_t bytes = 0;
};

/// What a FeatureBuffer's or LabelBuffer's allocator takes its block from and gives it back to:
/// a pool of recycled heap blocks (block_pool.h), or a part of the shared-memory slot
/// a worker process wrote the batch into (worker/transport/shared_slots.h), which goes back to its free
/// list when the tensors that adopted the batch die. Either may be given back from any thread.
class BlockSource {
 public:
  virtual ~BlockSource() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* block, std::size_t bytes) noexcept = 0;
  /// Lends `block` (`bytes` long), which a buffer took from here, to whatever will outlive the
  /// buffer (a tensor): the buffer's deallocate then leaves the block alone, and
  /// `end_loan(loan)` gives it back, on any thread. The tensor then needs no owner of its own
  /// for the buffer. nullptr where this source cannot; the caller keeps the buffer alive then.
  virtual BlockLoan* lend(void* block, std::size_t bytes) noexcept {
    static_cast<void>(block);
    static_cast<void>(bytes);
    return nullptr;
  }
  /// Gives back the block of `loan` (a BlockLoan*): a plain function, so that a tensor's storage
  /// can take it as its deleter with the loan as the context.
  static void end_loan(void* loan) noexcept {
    BlockLoan& lent = *static_cast<BlockLoan*>(loan);
    lent.source->give_back(lent);
  }

 protected:
  /// Frees the block of a loan that lend() made; called once for each.
  virtual void give_back(BlockLoan& loan) noexcept { static_cast<void>(loan); }
};

/// Where a batch's features and labels come from: a thread worker's pools, a worker process's
/// slot, or, without workers, the iterator's pools; the heap where null.
struct BatchBlocks {
  std::shared_ptr<BlockSource> features;
  std::shared_ptr<BlockSource> labels;
};

}  // namespace dlreset::data
