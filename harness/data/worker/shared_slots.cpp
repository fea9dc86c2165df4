#include "harness/data/worker/shared_slots.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "harness/data/errors.h"
#include "harness/data/worker/parent_only_fds.h"

namespace dlreset::data {

namespace {

/// The features of one batch in one slot. Handed to the FeatureBuffer that adopts them: its
/// one allocation is the slot's features, and giving that back frees the slot. Anything else
/// asked of it (a copy of the buffer) comes from the heap.
class SlotFeatures : public BlockSource {
 public:
  SlotFeatures(std::shared_ptr<SharedSlots> slots, int index, void* features, std::size_t bytes)
      : slots_(std::move(slots)), index_(index), features_(features), bytes_(bytes) {}
  ~SlotFeatures() override {
    if (!handed_out_) slots_->release(index_);  // never adopted: free the slot anyway
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
      slots_->release(index_);
    } else {
      ::operator delete(block, bytes);
    }
  }

 private:
  std::shared_ptr<SharedSlots> slots_;
  int index_;
  void* features_;
  std::size_t bytes_;
  bool handed_out_ = false;
};

[[noreturn]] void fail(const std::string& loader, const std::string& what, std::size_t bytes) {
  throw DataLoaderError("Cannot set up the shared memory of a DataLoader worker of loader '" + loader +
                        "' (" + std::to_string(bytes) + " bytes): " + what + " failed: " +
                        std::strerror(errno) + ". Use a smaller batch_size, fewer workers or "
                        "start_method 'thread'.");
}

}  // namespace

SharedSlots::SharedSlots(int fd, void* base, int count, std::size_t slot_bytes, bool owner)
    : fd_(fd), base_(base), count_(count), slot_bytes_(slot_bytes), owner_(owner) {
  free_.reserve(static_cast<std::size_t>(count));
  // Slot 0 on top: the first batches all go to the same few slots.
  for (int i = count - 1; i >= 0; --i) free_.push_back(i);
}

std::shared_ptr<SharedSlots> SharedSlots::create(int count, std::size_t slot_bytes, const std::string& loader) {
  const std::size_t bytes = static_cast<std::size_t>(count) * slot_bytes;
  const int fd = ::memfd_create("dlreset-batches", MFD_CLOEXEC);
  if (fd < 0) fail(loader, "memfd_create", bytes);
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    fail(loader, "ftruncate", bytes);
  }
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int error = errno;
    ::close(fd);
    errno = error;
    fail(loader, "mmap", bytes);
  }
  register_parent_only_fd(fd);
  register_parent_only_mapping(base, bytes);
  return std::shared_ptr<SharedSlots>(new SharedSlots(fd, base, count, slot_bytes, /*owner=*/true));
}

std::shared_ptr<SharedSlots> SharedSlots::attach(int fd, int count, std::size_t slot_bytes) {
  const std::size_t bytes = static_cast<std::size_t>(count) * slot_bytes;
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) fail("(spawned worker)", "mmap", bytes);
  return std::shared_ptr<SharedSlots>(new SharedSlots(-1, base, count, slot_bytes, /*owner=*/false));
}

SharedSlots::~SharedSlots() {
  if (owner_) unregister_parent_only_mapping(base_);
  ::munmap(base_, mapping_bytes());
  if (fd_ >= 0) {
    if (owner_) unregister_parent_only_fd(fd_);
    ::close(fd_);
  }
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
  return std::make_shared<SlotFeatures>(shared_from_this(), index, slot(index) + layout.features_offset(),
                                        layout.bytes() - layout.features_offset());
}

}  // namespace dlreset::data
