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
};

}  // namespace dlreset::data
