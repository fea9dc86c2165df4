// Where the blocks that hold a batch's features come from.
#pragma once

#include <cstddef>

namespace dlreset::data {

/// What a FeatureBuffer's allocator takes its block from and gives it back to: a pool of
/// recycled heap blocks (feature_buffer_pool.h), or the shared-memory slot a worker process
/// wrote the batch into (worker/shared_slots.h), which goes back to its free list when the
/// tensor that adopted the batch dies. Either may be given back from any thread.
class BlockSource {
 public:
  virtual ~BlockSource() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* block, std::size_t bytes) noexcept = 0;
  /// Lends `block`, which a buffer took from here, to whatever will outlive the buffer (a
  /// tensor): after a true answer the buffer's deallocate leaves the block alone, and
  /// `end_loan(this)` gives it back, on any thread. The tensor then needs no owner of its own
  /// for the buffer. false where this source cannot; the caller keeps the buffer alive then.
  virtual bool lend(void* block) noexcept {
    static_cast<void>(block);
    return false;
  }
  /// Gives back the block that `source` (a BlockSource*) lent: a plain function, so that a
  /// tensor's storage can take it as its deleter with `source` as the context.
  static void end_loan(void* source) noexcept { static_cast<BlockSource*>(source)->give_back_loan(); }

 protected:
  /// Frees the block lent last; called once for each lend() that answered true.
  virtual void give_back_loan() noexcept {}
};

}  // namespace dlreset::data
