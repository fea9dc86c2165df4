#include "harness/data/core/worker/process_endpoint.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "harness/data/core/worker/status_check.h"

namespace dlreset::data::detail {

namespace {
/// How often a worker blocked on its socket checks that its parent is still there, like
/// PyTorch's ManagerWatchdog. PR_SET_PDEATHSIG usually kills the worker first; this is the
/// second line of defence.
constexpr int kParentCheckMs = static_cast<int>(kStatusCheckInterval.count());

Message exit_message() {
  Message message;
  message.type = MessageType::exit;
  return message;
}
}  // namespace

ProcessEndpoint::ProcessEndpoint(SocketChannel channel, pid_t parent_pid, std::shared_ptr<SharedSlots> slots)
    : channel_(std::move(channel)), parent_pid_(parent_pid), slots_(std::move(slots)) {
  if (slots_) {
    tasks_ = slots_->tasks();
    answers_ = slots_->answers();
  }
  // A spawned worker's channel may have read the first tasks with its set-up: they are in the
  // decoder, and the socket will not say so.
  take_decoded();
}

SlotSpan ProcessEndpoint::shared_slot(int index) {
  if (!slots_ || index < 0 || index >= slots_->count()) return {};
  return {slots_->slot(index), slots_->slot_bytes()};
}

bool ProcessEndpoint::parent_gone() const { return ::getppid() != parent_pid_; }

void ProcessEndpoint::pull() {
  channel_.read_available();
  take_decoded();
}

void ProcessEndpoint::take_decoded() {
  while (std::optional<Message> message = channel_.pop()) {
    if (message->type == MessageType::exit) exit_seen_ = true;
    pending_.push_back(std::move(*message));
  }
}

std::optional<Message> ProcessEndpoint::next_in_order() {
  const SlotDescriptor* descriptor = tasks_.valid() ? tasks_.front() : nullptr;
  switch (order_.due(pending_.empty() ? nullptr : &pending_.front(), descriptor)) {
    case MessageOrder::Way::none: return std::nullopt;
    case MessageOrder::Way::behind:
      throw std::runtime_error("the main process sent message " + std::to_string(pending_.front().seq) +
                               " after message " + std::to_string(order_.last_received()) + ": a corrupt message");
    case MessageOrder::Way::socket: {
      Message message = std::move(pending_.front());
      pending_.pop_front();
      order_.taken();
      return message;
    }
    case MessageOrder::Way::ring: break;
  }
  Message task;
  task.type = MessageType::task;
  task.seq = descriptor->seq;
  task.send_idx = descriptor->send_idx;
  task.slot = descriptor->slot;
  const SlotSpan slot = shared_slot(descriptor->slot);
  if (slot.data == nullptr || descriptor->samples < 0 ||
      static_cast<std::size_t>(descriptor->samples) > slot.bytes / sizeof(std::int64_t)) {
    throw std::runtime_error("a task on the shared-memory ring names slot " + std::to_string(descriptor->slot) +
                             " and " + std::to_string(descriptor->samples) +
                             " indices, which the slots do not have: a corrupt task");
  }
  // Copied out: the batch is collated over them, into the same slot.
  const auto* indices = reinterpret_cast<const std::int64_t*>(slot.data);
  task.indices.assign(indices, indices + descriptor->samples);
  tasks_.pop();
  order_.taken();
  return task;
}

void ProcessEndpoint::wait(int timeout_ms, bool for_tasks) {
  pollfd entries[2] = {{channel_.fd(), POLLIN, 0}, {tasks_.bell_fd(), POLLIN, 0}};
  const SlotDescriptor* task = for_tasks && tasks_.valid() ? tasks_.front() : nullptr;
  if (order_.is_due(task)) return;  // pushed just now
  if (task != nullptr) {
    // A task is there but not due: the message before it came by the socket, sent before the
    // task was pushed. Read it; should it not be there, sleep on the socket alone, not spin.
    const std::size_t before = pending_.size();
    pull();
    if (pending_.size() != before || channel_.at_eof()) return;
    if (::poll(entries, 1, timeout_ms) > 0) pull();
    return;
  }
  const nfds_t count = tasks_.valid() ? 2 : 1;
  if (tasks_.valid()) {
    tasks_.prepare_to_wait();
    // Looked at again after saying so: a task pushed before that rang no bell.
    if (for_tasks ? tasks_.front() != nullptr : tasks_.closed()) {
      tasks_.finish_wait(false);
      return;
    }
  }
  const int ready = ::poll(entries, count, timeout_ms);
  if (tasks_.valid()) tasks_.finish_wait(ready > 0 && entries[1].revents != 0);
  if (ready > 0 && entries[0].revents != 0) pull();
}

Message ProcessEndpoint::receive() {
  while (true) {
    if (std::optional<Message> message = next_in_order()) return std::move(*message);
    if (channel_.at_eof() || parent_gone()) return exit_message();
    wait(kParentCheckMs, /*for_tasks=*/true);
  }
}

bool ProcessEndpoint::exit_requested() {
  // The closed task ring says it without a system call: this is asked before every task.
  if (tasks_.valid()) return tasks_.closed() || exit_seen_ || channel_.at_eof();
  pull();
  return exit_seen_ || channel_.at_eof();
}

void ProcessEndpoint::wait_until_exit_requested() {
  while (!exit_requested() && !parent_gone()) wait(kParentCheckMs, /*for_tasks=*/false);
}

bool ProcessEndpoint::send(Message message) {
  message.seq = order_.claim_send();
  const bool in_slot = message.type == MessageType::batch && message.slot >= 0 && message.slot_samples >= 0;
  if (answers_.valid() && in_slot && message.batch.sample_shape.size() <= SlotDescriptor::kMaxDims) {
    SlotDescriptor descriptor;
    descriptor.seq = message.seq;
    descriptor.send_idx = message.send_idx;
    descriptor.samples = message.slot_samples;
    descriptor.time_s = message.time_s;
    descriptor.slot = message.slot;
    descriptor.dims = static_cast<std::int32_t>(message.batch.sample_shape.size());
    std::copy(message.batch.sample_shape.begin(), message.batch.sample_shape.end(), descriptor.shape);
    // A full ring would mean a slot counted twice; the socket still takes the batch, in order.
    if (answers_.push(descriptor)) return true;
  }
  return channel_.send(message);
}

void prepare_worker_process_signals() {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGINT, SIG_IGN);   // PyTorch's workers ignore SIGINT too
  signal(SIGPIPE, SIG_IGN);  // a closed socket is an error value, not a death
  signal(SIGTERM, SIG_DFL);
  signal(SIGHUP, SIG_DFL);
}

}  // namespace dlreset::data::detail
