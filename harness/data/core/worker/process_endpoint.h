// The worker's side of its socket, in a forked or spawned worker process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "harness/data/core/worker/transport/message_order.h"
#include "harness/data/core/worker/transport/shared_slots.h"
#include "harness/data/core/worker/transport/socket_channel.h"
#include "harness/data/core/worker/worker_endpoint.h"

namespace dlreset::data::detail {

/// Tasks that have a shared-memory slot arrive on the slots' task ring, and batches in a slot
/// leave on the answer ring (descriptor_ring.h); everything else goes over the socket. Each
/// message carries its place in one order (Message::seq), and receive() hands them out in that
/// order, whichever way each came. The parent's exit request closes the task ring too, PyTorch's
/// done_event, so a worker sees it before the tasks queued in front of it without reading its
/// socket. Without slots, it reads ahead instead: every message that has arrived is pulled off
/// the socket into a local queue, so an exit request queued behind tasks is seen before those
/// tasks run.
class ProcessEndpoint : public WorkerEndpoint {
 public:
  /// `slots`: this worker's shared-memory slots, or null when it has none.
  ProcessEndpoint(SocketChannel channel, pid_t parent_pid, std::shared_ptr<SharedSlots> slots);

  Message receive() override;
  bool exit_requested() override;
  bool send(Message message) override;
  void wait_until_exit_requested() override;
  SlotSpan shared_slot(int index) override;

 private:
  /// Reads the socket, then takes_decoded().
  void pull();
  /// Moves the messages the channel has decoded into pending_.
  void take_decoded();
  bool parent_gone() const;
  /// The next message in order, if it has arrived: the socket's or the task ring's.
  std::optional<Message> next_in_order();
  /// Sleeps until the socket or the task ring's bell has something, or `timeout_ms` passes, and
  /// reads the socket if it has. `for_tasks`: a task already on the ring ends the wait (it is
  /// waiting for a message before it, from the socket); otherwise only its closing does.
  void wait(int timeout_ms, bool for_tasks);

  SocketChannel channel_;
  pid_t parent_pid_;
  std::shared_ptr<SharedSlots> slots_;
  DescriptorRing tasks_;         ///< Invalid without slots.
  DescriptorRing answers_;       ///< Invalid without slots.
  std::deque<Message> pending_;  ///< Off the socket, in order, not yet handed out.
  MessageOrder order_;           ///< The places of the messages, each way.
  bool exit_seen_ = false;
};

/// Makes a worker process behave like a PyTorch worker towards signals: Ctrl-C goes to the
/// whole process group, and the main process (not each worker) decides what to do with it.
void prepare_worker_process_signals();

}  // namespace dlreset::data::detail
