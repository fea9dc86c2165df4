// One worker process's shared-memory slots, where it collates its batches.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "harness/data/core/memory/block_source.h"
#include "harness/data/core/worker/transport/descriptor_ring.h"
#include "harness/sys/unique_fd.h"

namespace dlreset::data::detail {

/// Where a batch of `samples` samples of `numel` floats each lies in a slot: its dataset
/// indices, then its labels (8 bytes each), then its features. The offsets keep every part
/// aligned for its type.
struct SlotLayout {
  std::int64_t samples = 0;
  std::int64_t numel = 0;

  std::size_t labels_offset() const { return static_cast<std::size_t>(samples) * sizeof(std::int64_t); }
  std::size_t features_offset() const { return 2 * labels_offset(); }
  std::size_t bytes() const { return features_offset() + static_cast<std::size_t>(samples * numel) * sizeof(float); }
};

/// `count` slots of `slot_bytes` each, in one memfd that the main process maps and its worker
/// maps too (a fork worker inherits the mapping; a spawned one maps the descriptor it
/// inherits). The worker collates a task's batch straight into the slot the task names and
/// answers with a small descriptor; the main process hands the labels and features to the
/// tensors as they lie (no copy), and the slot is free again when both tensors have died, on
/// whatever thread.
///
/// Behind the slots, in the same memfd, lie the two rings of descriptors (descriptor_ring.h)
/// that carry tasks to the worker and batches back, each with its doorbell, an eventfd the
/// worker inherits with the memfd: a batch in a slot needs no socket at all.
///
/// A memfd has no name in /dev/shm and is freed with its last descriptor and mapping, so a
/// SIGKILLed run leaves nothing behind. Pages are taken only when first written, and the most
/// recently freed slot is handed out first, so an epoch of few large batches touches few
/// slots. Thread-safe.
class SharedSlots : public std::enable_shared_from_this<SharedSlots> {
 public:
  /// The main process's side: a new memfd, mapped. Throws DataLoaderError naming the loader,
  /// the size and the reason when the kernel refuses.
  static std::shared_ptr<SharedSlots> create(int count, std::size_t slot_bytes, const std::string& loader);
  /// A spawned worker's side: maps the memfd it inherited as `fd`, then closes `fd`, and rings
  /// the doorbells it inherited as `task_bell` and `answer_bell`.
  static std::shared_ptr<SharedSlots> attach(int fd, int count, std::size_t slot_bytes, int task_bell, int answer_bell);
  ~SharedSlots();
  SharedSlots(const SharedSlots&) = delete;
  SharedSlots& operator=(const SharedSlots&) = delete;

  /// The memfd, or -1 once closed (a worker keeps only the mapping).
  int fd() const { return fd_.get(); }
  int count() const { return count_; }
  std::size_t slot_bytes() const { return slot_bytes_; }
  void* mapping() const { return base_; }
  std::size_t mapping_bytes() const { return mapping_bytes(count_, slot_bytes_); }
  std::uint8_t* slot(int index) const;
  /// The ring of tasks, main process to worker, and the ring of batches, worker to main
  /// process. Views: valid as long as these slots live.
  DescriptorRing tasks() const;
  DescriptorRing answers() const;
  int task_bell_fd() const { return task_bell_.get(); }
  int answer_bell_fd() const { return answer_bell_.get(); }

  /// A free slot, or -1 when every slot holds a batch in flight or in use.
  int acquire();
  /// Frees a slot that acquire() handed out.
  void release(int index) noexcept;
  /// Slots handed out and not yet freed.
  int in_use() const;
  /// The labels and features of the batch of `layout` in slot `index`, each of which a buffer
  /// must take (allocate a buffer of its size from it) before the slot is handed out again:
  /// the slot is free once both are given back, by their buffers or by the tensors they were
  /// lent to (BlockSource::lend). A batch with neither frees the slot at once. The sources keep
  /// this mapping alive as long as their buffers or loans.
  BatchBlocks hand_over(int index, const SlotLayout& layout);

 private:
  class SlotPart;
  /// A slot's two parts, and how many of them are still out.
  struct Parts {
    std::unique_ptr<SlotPart> labels;
    std::unique_ptr<SlotPart> features;
    std::atomic<int> outstanding{0};
  };

  SharedSlots(sys::UniqueFd fd, void* base, int count, std::size_t slot_bytes, bool owner, sys::UniqueFd task_bell,
              sys::UniqueFd answer_bell);
  /// The slots, then the two rings, in whole pages.
  static std::size_t mapping_bytes(int count, std::size_t slot_bytes);
  std::uint8_t* rings() const { return slot(count_); }
  /// A part of slot `index` came back; the last one frees the slot.
  void part_returned(int index) noexcept;

  sys::UniqueFd fd_;
  void* base_;
  int count_;
  std::size_t slot_bytes_;
  bool owner_;                 ///< The main process's object: registers and closes its descriptors.
  sys::UniqueFd task_bell_;    ///< The task ring's eventfd, which the worker sleeps on.
  sys::UniqueFd answer_bell_;  ///< The answer ring's eventfd, which the main process waits on.
  mutable std::mutex mutex_;
  std::vector<int> free_;                      ///< Capacity `count`, so release() never allocates.
  std::vector<std::unique_ptr<Parts>> parts_;  ///< One per slot.
};

}  // namespace dlreset::data::detail
