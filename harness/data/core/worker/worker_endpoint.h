// The worker's side of its connection to the parent, whatever the back-end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "harness/data/core/memory/block_source.h"
#include "harness/data/core/worker/transport/protocol.h"

namespace dlreset::data::detail {

/// One shared-memory slot, as the worker sees it (worker/transport/shared_slots.h).
struct SlotSpan {
  std::uint8_t* data = nullptr;
  std::size_t bytes = 0;
};

/// What the worker loop needs from its back-end: PyTorch's index_queue, data_queue and
/// done_event, seen from the worker.
class WorkerEndpoint {
 public:
  virtual ~WorkerEndpoint() = default;
  /// The next message from the parent; blocks. A parent that is gone reads as `exit`.
  virtual Message receive() = 0;
  /// True when the parent has asked this worker to exit, even if tasks are still queued in
  /// front of that request (PyTorch's done_event): the worker then skips them.
  virtual bool exit_requested() = 0;
  /// Sends to the parent. Returns false when the parent is gone: the worker then exits. Takes
  /// the message by value so the thread back-end can move a batch instead of copying it.
  virtual bool send(Message message) = 0;
  /// Blocks until the parent asks this worker to exit (WorkerInfo::wait_until_stopping()), so
  /// that a dataset waiting on it can be shut down in every back-end.
  virtual void wait_until_exit_requested() = 0;
  /// The shared-memory slot a task names, where this back-end has them (process workers); an
  /// empty span otherwise, or for an index out of range: the batch then travels in the reply.
  virtual SlotSpan shared_slot(int index) {
    static_cast<void>(index);
    return {};
  }
  /// Where a batch that travels in its reply gets its features and labels: the thread
  /// back-end's pools, whose blocks come back when the consumer's tensors die, so that its
  /// steady state takes no block from the heap for them. Null (process workers): the heap,
  /// since the worker frees the blocks as soon as they are sent and its allocator hands the
  /// same blocks out again.
  virtual BatchBlocks fetch_blocks() { return {}; }
};

}  // namespace dlreset::data::detail
