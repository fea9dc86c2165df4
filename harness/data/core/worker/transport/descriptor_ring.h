// A ring of batch descriptors in shared memory, one way between a main process and a worker.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace dlreset::data::detail {

/// One task or one batch that lies in a shared-memory slot (worker/transport/shared_slots.h): where it
/// is, not what it holds. A task's indices and a batch's indices, labels and features are in
/// the slot itself.
struct SlotDescriptor {
  /// The most dimensions a sample's shape may have to travel here; a batch of a dataset whose
  /// samples have more goes over the socket.
  static constexpr int kMaxDims = 6;

  /// Its place in the one order of everything sent that way, over this ring and the socket
  /// together (Message::seq), so the receiver can put the two back in sequence.
  std::int64_t seq = 0;
  std::int64_t send_idx = -1;
  /// task: how many indices the slot holds; batch: how many samples.
  std::int64_t samples = 0;
  double time_s = 0.0;  ///< batch: when the worker answered (Message::time_s).
  std::int32_t slot = -1;
  std::int32_t dims = 0;  ///< batch: the sample shape's rank.
  std::int64_t shape[kMaxDims] = {};
};

/// A single-producer, single-consumer ring of descriptors, laid out in memory that both
/// processes map, with a doorbell (an eventfd) that the producer rings only when the consumer
/// has said it is about to sleep. A worker kept busy by its prefetched tasks and a main
/// process kept busy by its training step then hand batches over without a system call, where a
/// socket costs a send, a poll and a receive a batch, most of the main process's time per batch.
///
/// The consumer's sleep and the producer's push follow the usual handshake: the consumer
/// announces it waits, looks once more, and only then sleeps; the producer publishes, and
/// then looks whether anyone waits. Both steps are sequentially consistent, so at least one
/// of the two sees the other, and no descriptor is left behind a sleeping consumer.
///
/// Capacity is the worker's slot count: every descriptor on either ring holds a distinct
/// slot, so a ring is never full while its slots are counted right; push() says so if it is.
class DescriptorRing {
 public:
  /// Bytes a ring of `capacity` descriptors takes in the shared mapping.
  static std::size_t bytes(std::uint32_t capacity);

  /// A view of the ring at `memory` (bytes(capacity) of zeroed or already-used memory) whose
  /// doorbell is `bell_fd`. Owns neither.
  DescriptorRing(void* memory, std::uint32_t capacity, int bell_fd);
  /// No ring: every call below but bell_fd() must not be made.
  DescriptorRing() = default;

  bool valid() const { return control_ != nullptr; }
  int bell_fd() const { return bell_fd_; }

  /// Producer: appends `descriptor` and rings the bell if the consumer waits. Returns false,
  /// pushing nothing, when the ring is full.
  bool push(const SlotDescriptor& descriptor);
  /// Producer: no more descriptors will come that the consumer should act on (PyTorch's
  /// done_event, for the task ring): the consumer skips what is still queued.
  void close();

  /// Consumer: the oldest descriptor, or null when the ring is empty.
  const SlotDescriptor* front() const;
  void pop();
  /// Consumer: announces that it is about to sleep on the bell. Look at front() once more
  /// after this, and sleep only if it is still empty (or not yet due).
  void prepare_to_wait();
  /// Consumer: awake again. `rang`: the bell's descriptor was readable, so its count is taken
  /// and the next wait can sleep.
  void finish_wait(bool rang);
  bool closed() const;

  /// How many times the producer rang the bell, over the ring's life (both processes see it).
  std::uint64_t bells_rung() const;
  /// How many descriptors were pushed, over the ring's life.
  std::uint64_t pushed() const;

 private:
  struct Control;

  /// Rings the bell if the consumer said it waits, and clears that.
  void ring_if_waiting();

  Control* control_ = nullptr;
  SlotDescriptor* entries_ = nullptr;
  std::uint32_t capacity_ = 0;
  int bell_fd_ = -1;
};

}  // namespace dlreset::data::detail
