#include "harness/data/core/worker/transport/descriptor_ring.h"

#include <unistd.h>

#include <new>
#include <type_traits>

namespace dlreset::data::detail {

/// The ring's counters, each on its own cache line: the producer writes `head` and
/// `bells`, the consumer `tail` and `waiting`. They live in memory two processes map, which
/// is sound only for atomics that need no lock (a lock would live in one process).
struct DescriptorRing::Control {
  alignas(64) std::atomic<std::uint64_t> head;     ///< Descriptors pushed.
  alignas(64) std::atomic<std::uint64_t> tail;     ///< Descriptors popped.
  alignas(64) std::atomic<std::uint32_t> waiting;  ///< 1: the consumer may be asleep on the bell.
  std::atomic<std::uint32_t> closed;               ///< 1: skip what is queued.
  alignas(64) std::atomic<std::uint64_t> bells;    ///< Times the bell was rung.
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free,
              "the ring's counters must be lock-free to be shared between processes");
static_assert(std::is_trivially_copyable_v<SlotDescriptor>);

namespace {

/// The control block's room in front of the entries.
constexpr std::size_t kControlBytes = 256;

}  // namespace

std::size_t DescriptorRing::bytes(std::uint32_t capacity) {
  // Whole cache lines, so that a ring placed right behind this one is aligned for its control.
  const std::size_t bytes = kControlBytes + static_cast<std::size_t>(capacity) * sizeof(SlotDescriptor);
  return (bytes + 63) / 64 * 64;
}

DescriptorRing::DescriptorRing(void* memory, std::uint32_t capacity, int bell_fd)
    : control_(static_cast<Control*>(memory)),
      entries_(reinterpret_cast<SlotDescriptor*>(static_cast<std::uint8_t*>(memory) + kControlBytes)),
      capacity_(capacity),
      bell_fd_(bell_fd) {
  static_assert(sizeof(Control) <= kControlBytes, "the control block must fit in front of the entries");
}

bool DescriptorRing::push(const SlotDescriptor& descriptor) {
  const std::uint64_t head = control_->head.load(std::memory_order_relaxed);
  if (head - control_->tail.load(std::memory_order_acquire) >= capacity_) return false;
  entries_[head % capacity_] = descriptor;
  control_->head.store(head + 1, std::memory_order_seq_cst);
  ring_if_waiting();
  return true;
}

void DescriptorRing::close() {
  control_->closed.store(1, std::memory_order_seq_cst);
  ring_if_waiting();
}

void DescriptorRing::ring_if_waiting() {
  if (control_->waiting.exchange(0, std::memory_order_seq_cst) == 0) return;
  control_->bells.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t one = 1;
  // Non-blocking: a count already pending is wake-up enough.
  [[maybe_unused]] const ssize_t written = ::write(bell_fd_, &one, sizeof one);
}

const SlotDescriptor* DescriptorRing::front() const {
  const std::uint64_t tail = control_->tail.load(std::memory_order_relaxed);
  if (control_->head.load(std::memory_order_seq_cst) == tail) return nullptr;
  return &entries_[tail % capacity_];
}

void DescriptorRing::pop() {
  control_->tail.store(control_->tail.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

void DescriptorRing::prepare_to_wait() { control_->waiting.store(1, std::memory_order_seq_cst); }

void DescriptorRing::finish_wait(bool rang) {
  control_->waiting.store(0, std::memory_order_relaxed);
  if (!rang) return;
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t got = ::read(bell_fd_, &count, sizeof count);
}

bool DescriptorRing::closed() const { return control_->closed.load(std::memory_order_seq_cst) != 0; }

std::uint64_t DescriptorRing::bells_rung() const { return control_->bells.load(std::memory_order_relaxed); }

std::uint64_t DescriptorRing::pushed() const { return control_->head.load(std::memory_order_relaxed); }

}  // namespace dlreset::data::detail
