// The main process's side of one process worker's transport: its socket, its two rings, and the
// order of the messages on them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "harness/data/core/memory/block_pool.h"
#include "harness/data/core/worker/transport/descriptor_ring.h"
#include "harness/data/core/worker/transport/message_order.h"
#include "harness/data/core/worker/transport/protocol.h"
#include "harness/data/core/worker/transport/shared_slots.h"
#include "harness/data/core/worker/transport/socket_channel.h"
#include "harness/data/core/worker/transport/transport_stats.h"

namespace dlreset::data::detail {

/// Everything the main process keeps to talk to one worker: a task with a free slot that fits
/// goes as a descriptor on the task ring (descriptor_ring.h), anything else over the socket,
/// each with its place in the one order of that direction (message_order.h); what comes back
/// is popped in its order, whichever way it came. It waits for nothing itself: the pool waits
/// for all its workers at once (worker/readiness_set.h), reads the connections that are ready,
/// and decides what a wait for room to send does meanwhile.
class WorkerConnection {
 public:
  WorkerConnection() = default;
  /// `channel`: the main process's end of the socket of worker `id` (pid `pid`) of loader
  /// `loader`; `slots`: its shared-memory slots, or null when every batch travels in its message.
  WorkerConnection(std::string loader, int id, pid_t pid, SocketChannel channel, std::shared_ptr<SharedSlots> slots);

  int id() const { return id_; }
  /// The socket's descriptor, -1 once closed.
  int fd() const { return channel_.fd(); }
  bool open() const { return channel_.open(); }
  /// True once the worker closed its end and everything it sent was read, or this end was closed.
  bool at_eof() const { return channel_.at_eof(); }
  /// The answer ring's doorbell, -1 without slots.
  int answer_bell_fd() const { return answers_.valid() ? answers_.bell_fd() : -1; }
  /// Null when every batch travels in its message.
  SharedSlots* slots() const { return slots_.get(); }
  /// Closed with a frame half sent (cut_off()): the worker cannot be told to exit.
  bool cut_off() const { return cut_off_; }

  /// Sends `message` in its place in order: a task on the task ring when a slot is free and
  /// holds its indices, otherwise over the socket (a task then with its slot, or none when the
  /// consumer holds them all). An exit request closes the task ring first, so the worker skips
  /// what is queued there. Calls `wait_for_room` while the socket is full. Returns false when
  /// the message is lost: the worker is gone or `wait_for_room` gave it up; its slot is free
  /// again then.
  bool send(const Message& message, const SocketChannel::WaitForRoom& wait_for_room);
  /// The next message, of either way, if it is due and has arrived: a batch in a slot as the
  /// message its descriptor stands for (slot_batch.h). Throws DataLoaderError for a message
  /// whose place was already taken: a corrupt message.
  std::optional<Message> pop_in_order();
  /// The next data message that has arrived, in order, its batch taken from its slot (or the
  /// slot freed, for an error or a batch that came inline: take_from_slot()), its index list
  /// from `index_blocks`; the workers' reports before it go to `on_report`.
  std::optional<Message> pop_data(const std::shared_ptr<BlockPool>& index_blocks,
                                  const std::function<void(const Message&)>& on_report);
  /// Reads what the socket holds, without blocking. False once the worker closed its end and
  /// everything it sent is read.
  bool read() { return channel_.read_available(); }
  /// Closes the socket; a frame half sent also marks it cut_off.
  void close(bool frame_half_sent = false);

  /// Adds this worker's counts to a pool's.
  void add_counts(TransportStats& stats) const;

  /// Readies the answer ring for a sleep (DescriptorRing::prepare_to_wait); true when a batch
  /// due next is already on it, so the wait must not sleep.
  bool prepare_to_wait();
  /// Ends the sleep prepare_to_wait() announced; nothing when `prepared` is false.
  void finish_wait(bool prepared);

 private:
  /// Puts a task on the task ring in slot `slot`; false when the slot cannot hold its indices
  /// or the ring is full, the task then to go over the socket.
  bool push_task(const Message& message, int slot);

  std::string loader_;
  int id_ = 0;
  pid_t pid_ = -1;
  SocketChannel channel_;
  std::shared_ptr<SharedSlots> slots_;
  DescriptorRing tasks_;    ///< Invalid without slots.
  DescriptorRing answers_;  ///< Invalid without slots.
  MessageOrder order_;      ///< The places of its messages, each way.
  /// Off the socket, but with a message before it still on the answer ring.
  std::optional<Message> held_;
  /// The message being sent over the socket, with its place in order and its slot filled in: a
  /// copy kept from message to message, so that copying the next one into it reuses its buffers.
  Message outgoing_;
  std::int64_t batches_in_slots_ = 0;
  std::int64_t batches_without_a_slot_ = 0;
  bool cut_off_ = false;
};

}  // namespace dlreset::data::detail
