// How a pool's batches travelled: in shared-memory slots or in their messages, the descriptors on
// the shared-memory rings, and the heap blocks taken for batches. A pool of threads has no
// slots or rings: its counts but the blocks stay zero.
#pragma once

#include <cstdint>

namespace dlreset::data::detail {

/// One look at a worker pool's transport (WorkerPool::stats()): tests check that batches go
/// where they should, and benchmarks put the counts beside their times.
struct TransportStats {
  /// Shared-memory slots (worker/transport/shared_slots.h) that hold a batch in flight or in use.
  int slots_in_use = 0;
  /// Batches that arrived in a slot, and those that travelled in their message because every
  /// slot of their worker was held.
  std::int64_t batches_in_slots = 0;
  std::int64_t batches_without_a_slot = 0;
  /// Batch-sized blocks taken from the heap for batches outside the slots: those that came in
  /// their message (process workers) and every batch of thread workers. Freed batches give their
  /// blocks back to a pool (block_pool.h), so in the steady state this stops growing.
  std::int64_t feature_blocks_allocated = 0;
  /// Tasks and batches that went as descriptors on the shared-memory rings
  /// (worker/transport/descriptor_ring.h), both ways, and the times one side woke the other with a ring's
  /// bell: a descriptor that found its reader awake needed none.
  std::int64_t ring_descriptors = 0;
  std::int64_t doorbells = 0;
};

}  // namespace dlreset::data::detail
