// The worker's side of its socket, in a forked or spawned worker process.
#pragma once

#include <sys/types.h>

#include <deque>
#include <memory>

#include "harness/data/worker/shared_slots.h"
#include "harness/data/worker/socket_channel.h"
#include "harness/data/worker/worker_endpoint.h"

namespace dlreset::data {

/// Reads ahead: every message that has arrived is pulled off the socket into a local queue,
/// so an exit request queued behind tasks is seen before those tasks run (PyTorch gets the
/// same from done_event, a flag shared outside the queue).
class ProcessEndpoint : public WorkerEndpoint {
 public:
  /// `slots`: this worker's shared-memory slots, or null when it has none.
  ProcessEndpoint(SocketChannel channel, pid_t parent_pid, std::shared_ptr<SharedSlots> slots);

  Message receive() override;
  bool exit_requested() override;
  bool send(Message message) override { return channel_.send(message); }
  void wait_until_exit_requested() override;
  SlotSpan shared_slot(int index) override;

 private:
  void pull();
  bool parent_gone() const;

  SocketChannel channel_;
  pid_t parent_pid_;
  std::shared_ptr<SharedSlots> slots_;
  std::deque<Message> pending_;
  bool exit_seen_ = false;
};

/// Makes a worker process behave like a PyTorch worker towards signals: Ctrl-C goes to the
/// whole process group, and the main process (not each worker) decides what to do with it.
void prepare_worker_process_signals();

}  // namespace dlreset::data
