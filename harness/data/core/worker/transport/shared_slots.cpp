#include "harness/data/core/worker/transport/shared_slots.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "harness/data/core/errors.h"
#include "harness/data/core/worker/transport/parent_only_fds.h"

namespace dlreset::data::detail {

/// One part of the batch in a slot (its labels, or its features), as the block of the buffer
/// that takes it: that buffer's one allocation is the part, and the slot is free again once
/// every part it handed over is back, from the buffer's deallocate or, where a tensor took the
/// part over (lend), from the tensor's deleter. Anything else asked of it (a copy of the buffer)
/// comes from the heap. Two per slot, made with the slots and set anew for each batch: handing
/// a batch out allocates nothing.
class SharedSlots::SlotPart : public BlockSource {
 public:
  SlotPart(SharedSlots* slots, int index) : slots_(slots), index_(index) {}

  /// A new batch's part: called once the slot is this batch's, before a buffer takes it.
  void hand_over(void* block, std::size_t bytes) {
    block_ = block;
    bytes_ = bytes;
    handed_out_ = false;
  }

  void* allocate(std::size_t bytes) override {
    if (!handed_out_ && bytes <= bytes_) {
      handed_out_ = true;
      return block_;
    }
    return ::operator new(bytes);
  }
  void deallocate(void* block, std::size_t bytes) noexcept override {
    if (block != block_) {
      ::operator delete(block, bytes);
    } else if (!lent_) {
      slots_->part_returned(index_);  // the last touch: the slot may be handed out again at once
    }
  }
  BlockLoan* lend(void* block, std::size_t bytes) noexcept override {
    if (block != block_ || !handed_out_ || lent_) return nullptr;
    lent_ = true;
    loan_ = BlockLoan{this, block, bytes};
    // The tensor holds only a pointer to this part: the mapping must live as long.
    keep_ = slots_->shared_from_this();
    return &loan_;
  }

 protected:
  void give_back(BlockLoan& /*loan*/) noexcept override {
    // Taken out first: dropping the last owner unmaps the slots, this part with them.
    const std::shared_ptr<SharedSlots> keep = std::move(keep_);
    lent_ = false;
    slots_->part_returned(index_);
  }

 private:
  SharedSlots* slots_;
  int index_;
  void* block_ = nullptr;
  std::size_t bytes_ = 0;
  bool handed_out_ = false;
  bool lent_ = false;
  BlockLoan loan_;
  std::shared_ptr<SharedSlots> keep_;  ///< Set while lent.
};

namespace {

[[noreturn]] void fail(const std::string& loader, const std::string& what, std::size_t bytes) {
  throw DataLoaderError("Cannot set up the shared memory of a DataLoader worker of loader '" + loader + "' (" +
                        std::to_string(bytes) + " bytes): " + what + " failed: " + std::strerror(errno) +
                        ". Use a smaller batch_size, fewer workers or "
                        "start_method 'thread'.");
}

}  // namespace

SharedSlots::SharedSlots(sys::UniqueFd fd, void* base, int count, std::size_t slot_bytes, bool owner,
                         sys::UniqueFd task_bell, sys::UniqueFd answer_bell)
    : fd_(std::move(fd)),
      base_(base),
      count_(count),
      slot_bytes_(slot_bytes),
      owner_(owner),
      task_bell_(std::move(task_bell)),
      answer_bell_(std::move(answer_bell)) {
  free_.reserve(static_cast<std::size_t>(count));
  // Slot 0 on top: the first batches all go to the same few slots.
  for (int i = count - 1; i >= 0; --i) free_.push_back(i);
  parts_.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    parts_.push_back(std::make_unique<Parts>());
    parts_.back()->labels = std::make_unique<SlotPart>(this, i);
    parts_.back()->features = std::make_unique<SlotPart>(this, i);
  }
}

std::size_t SharedSlots::mapping_bytes(int count, std::size_t slot_bytes) {
  constexpr std::size_t kPage = 4096;
  const auto capacity = static_cast<std::uint32_t>(count);
  const std::size_t rings = 2 * DescriptorRing::bytes(capacity);
  return static_cast<std::size_t>(count) * slot_bytes + (rings + kPage - 1) / kPage * kPage;
}

std::shared_ptr<SharedSlots> SharedSlots::create(int count, std::size_t slot_bytes, const std::string& loader) {
  const std::size_t bytes = mapping_bytes(count, slot_bytes);
  // Each descriptor made here is owned from its first moment, so every way out below closes it:
  // a loader that keeps failing to start (a full /dev/shm, a low ulimit) must not run out of
  // descriptors.
  sys::UniqueFd fd(::memfd_create("dlreset-batches", MFD_CLOEXEC));
  if (fd.get() < 0) fail(loader, "memfd_create", bytes);
  if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) fail(loader, "ftruncate", bytes);
  sys::UniqueFd task_bell(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (task_bell.get() < 0) fail(loader, "eventfd", bytes);
  sys::UniqueFd answer_bell(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (answer_bell.get() < 0) fail(loader, "eventfd", bytes);
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (base == MAP_FAILED) fail(loader, "mmap", bytes);
  for (const int made : {fd.get(), task_bell.get(), answer_bell.get()}) register_parent_only_fd(made);
  register_parent_only_mapping(base, bytes);
  return std::shared_ptr<SharedSlots>(new SharedSlots(std::move(fd), base, count, slot_bytes, /*owner=*/true,
                                                      std::move(task_bell), std::move(answer_bell)));
}

std::shared_ptr<SharedSlots> SharedSlots::attach(int fd, int count, std::size_t slot_bytes, int task_bell,
                                                 int answer_bell) {
  const std::size_t bytes = mapping_bytes(count, slot_bytes);
  // Inherited across exec, so not close-on-exec: a program the dataset starts must not keep
  // them, as it must not keep the channel.
  ::fcntl(task_bell, F_SETFD, FD_CLOEXEC);
  ::fcntl(answer_bell, F_SETFD, FD_CLOEXEC);
  void* base = nullptr;
  {
    // The mapping keeps the memory; the memfd itself is needed no longer than the mmap.
    const sys::UniqueFd memfd(fd);
    base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd.get(), 0);
  }
  if (base == MAP_FAILED) fail("(spawned worker)", "mmap", bytes);
  return std::shared_ptr<SharedSlots>(new SharedSlots(sys::UniqueFd(), base, count, slot_bytes, /*owner=*/false,
                                                      sys::UniqueFd(task_bell), sys::UniqueFd(answer_bell)));
}

SharedSlots::~SharedSlots() {
  if (owner_) unregister_parent_only_mapping(base_);
  ::munmap(base_, mapping_bytes());
  // Off the list before the members close them: a descriptor opened next may get the same number.
  for (const sys::UniqueFd* fd : {&fd_, &task_bell_, &answer_bell_}) {
    if (owner_ && fd->get() >= 0) unregister_parent_only_fd(fd->get());
  }
}

DescriptorRing SharedSlots::tasks() const {
  return DescriptorRing(rings(), static_cast<std::uint32_t>(count_), task_bell_.get());
}

DescriptorRing SharedSlots::answers() const {
  const auto capacity = static_cast<std::uint32_t>(count_);
  return DescriptorRing(rings() + DescriptorRing::bytes(capacity), capacity, answer_bell_.get());
}

std::uint8_t* SharedSlots::slot(int index) const {
  return static_cast<std::uint8_t*>(base_) + static_cast<std::size_t>(index) * slot_bytes_;
}

int SharedSlots::acquire() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) return -1;
  const int index = free_.back();
  free_.pop_back();
  return index;
}

void SharedSlots::release(int index) noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(index);
}

int SharedSlots::in_use() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return count_ - static_cast<int>(free_.size());
}

BatchBlocks SharedSlots::hand_over(int index, const SlotLayout& layout) {
  Parts& parts = *parts_[static_cast<std::size_t>(index)];
  std::uint8_t* base = slot(index);
  const std::size_t labels_bytes = layout.features_offset() - layout.labels_offset();
  const std::size_t features_bytes = layout.bytes() - layout.features_offset();
  parts.labels->hand_over(base + layout.labels_offset(), labels_bytes);
  parts.features->hand_over(base + layout.features_offset(), features_bytes);
  // An empty part is never allocated, so it is never given back either.
  const int taken = (labels_bytes > 0 ? 1 : 0) + (features_bytes > 0 ? 1 : 0);
  parts.outstanding.store(taken, std::memory_order_relaxed);
  if (taken == 0) release(index);
  // Each shares the ownership of these slots, so the mapping outlives its buffer; no allocation.
  const std::shared_ptr<SharedSlots> self = shared_from_this();
  return {std::shared_ptr<BlockSource>(self, parts.features.get()),
          std::shared_ptr<BlockSource>(self, parts.labels.get())};
}

void SharedSlots::part_returned(int index) noexcept {
  Parts& parts = *parts_[static_cast<std::size_t>(index)];
  // acq_rel: whoever returns the last part sees every write made under the other part.
  if (parts.outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) release(index);
}

}  // namespace dlreset::data::detail
