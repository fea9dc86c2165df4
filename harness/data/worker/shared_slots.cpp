#include "harness/data/worker/shared_slots.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "harness/data/errors.h"
#include "harness/data/worker/parent_only_fds.h"

namespace dlreset::data {

/// The features of the batch in one slot, as the block of the FeatureBuffer that adopts them:
/// its one allocation is the slot's features, and giving that back frees the slot. Anything
/// else asked of it (a copy of the buffer) comes from the heap. One per slot, made with the
/// slots and set anew for each batch: handing a batch out allocates nothing.
class SharedSlots::SlotFeatures : public BlockSource {
 public:
  SlotFeatures(SharedSlots* slots, int index) : slots_(slots), index_(index) {}

  /// A new batch's features: called once the slot is this batch's, before the buffer adopts it.
  void hand_over(void* features, std::size_t bytes) {
    features_ = features;
    bytes_ = bytes;
    handed_out_ = false;
  }

  void* allocate(std::size_t bytes) override {
    if (!handed_out_ && bytes <= bytes_) {
      handed_out_ = true;
      return features_;
    }
    return ::operator new(bytes);
  }
  void deallocate(void* block, std::size_t bytes) noexcept override {
    if (block == features_) {
      slots_->release(index_);  // the last touch: the slot may be handed out again at once
    } else {
      ::operator delete(block, bytes);
    }
  }

 private:
  SharedSlots* slots_;
  int index_;
  void* features_ = nullptr;
  std::size_t bytes_ = 0;
  bool handed_out_ = false;
};

namespace {

[[noreturn]] void fail(const std::string& loader, const std::string& what, std::size_t bytes) {
  throw DataLoaderError("Cannot set up the shared memory of a DataLoader worker of loader '" + loader +
                        "' (" + std::to_string(bytes) + " bytes): " + what + " failed: " +
                        std::strerror(errno) + ". Use a smaller batch_size, fewer workers or "
                        "start_method 'thread'.");
}

}  // namespace

SharedSlots::SharedSlots(int fd, void* base, int count, std::size_t slot_bytes, bool owner, int task_bell,
                         int answer_bell)
    : fd_(fd),
      base_(base),
      count_(count),
      slot_bytes_(slot_bytes),
      owner_(owner),
      task_bell_(task_bell),
      answer_bell_(answer_bell) {
  free_.reserve(static_cast<std::size_t>(count));
  // Slot 0 on top: the first batches all go to the same few slots.
  for (int i = count - 1; i >= 0; --i) free_.push_back(i);
  features_.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) features_.push_back(std::make_unique<SlotFeatures>(this, i));
}

std::size_t SharedSlots::mapping_bytes(int count, std::size_t slot_bytes) {
  constexpr std::size_t kPage = 4096;
  const auto capacity = static_cast<std::uint32_t>(count);
  const std::size_t rings = 2 * DescriptorRing::bytes(capacity);
  return static_cast<std::size_t>(count) * slot_bytes + (rings + kPage - 1) / kPage * kPage;
}

std::shared_ptr<SharedSlots> SharedSlots::create(int count, std::size_t slot_bytes, const std::string& loader) {
  const std::size_t bytes = mapping_bytes(count, slot_bytes);
  // Every descriptor made here is closed again on each way out below: a loader that keeps
  // failing to start (a full /dev/shm, a low ulimit) must not run out of descriptors.
  std::vector<int> made;
  const auto fail_closing = [&](const std::string& what) {
    const int error = errno;
    for (const int fd : made) ::close(fd);
    errno = error;
    fail(loader, what, bytes);
  };
  const int fd = ::memfd_create("dlreset-batches", MFD_CLOEXEC);
  if (fd < 0) fail_closing("memfd_create");
  made.push_back(fd);
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) fail_closing("ftruncate");
  const int task_bell = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (task_bell < 0) fail_closing("eventfd");
  made.push_back(task_bell);
  const int answer_bell = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (answer_bell < 0) fail_closing("eventfd");
  made.push_back(answer_bell);
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) fail_closing("mmap");
  for (const int made_fd : made) register_parent_only_fd(made_fd);
  register_parent_only_mapping(base, bytes);
  return std::shared_ptr<SharedSlots>(
      new SharedSlots(fd, base, count, slot_bytes, /*owner=*/true, task_bell, answer_bell));
}

std::shared_ptr<SharedSlots> SharedSlots::attach(int fd, int count, std::size_t slot_bytes, int task_bell,
                                                 int answer_bell) {
  const std::size_t bytes = mapping_bytes(count, slot_bytes);
  // Inherited across exec, so not close-on-exec: a program the dataset starts must not keep
  // them, as it must not keep the channel.
  ::fcntl(task_bell, F_SETFD, FD_CLOEXEC);
  ::fcntl(answer_bell, F_SETFD, FD_CLOEXEC);
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) fail("(spawned worker)", "mmap", bytes);
  return std::shared_ptr<SharedSlots>(
      new SharedSlots(-1, base, count, slot_bytes, /*owner=*/false, task_bell, answer_bell));
}

SharedSlots::~SharedSlots() {
  if (owner_) unregister_parent_only_mapping(base_);
  ::munmap(base_, mapping_bytes());
  for (const int fd : {fd_, task_bell_, answer_bell_}) {
    if (fd < 0) continue;
    if (owner_) unregister_parent_only_fd(fd);
    ::close(fd);
  }
}

DescriptorRing SharedSlots::tasks() const {
  return DescriptorRing(rings(), static_cast<std::uint32_t>(count_), task_bell_);
}

DescriptorRing SharedSlots::answers() const {
  const auto capacity = static_cast<std::uint32_t>(count_);
  return DescriptorRing(rings() + DescriptorRing::bytes(capacity), capacity, answer_bell_);
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

std::shared_ptr<BlockSource> SharedSlots::features_block(int index, const SlotLayout& layout) {
  SlotFeatures& features = *features_[static_cast<std::size_t>(index)];
  features.hand_over(slot(index) + layout.features_offset(), layout.bytes() - layout.features_offset());
  // Shares the ownership of these slots, so the mapping outlives the buffer; no allocation.
  return std::shared_ptr<BlockSource>(shared_from_this(), &features);
}

}  // namespace dlreset::data
