#include "harness/data/worker/process_endpoint.h"

#include <signal.h>
#include <unistd.h>

#include "harness/data/worker/status_check.h"

namespace dlreset::data {

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
    : channel_(std::move(channel)), parent_pid_(parent_pid), slots_(std::move(slots)) {}

SlotSpan ProcessEndpoint::shared_slot(int index) {
  if (!slots_ || index < 0 || index >= slots_->count()) return {};
  return {slots_->slot(index), slots_->slot_bytes()};
}

bool ProcessEndpoint::parent_gone() const { return ::getppid() != parent_pid_; }

void ProcessEndpoint::pull() {
  channel_.read_available();
  while (std::optional<Message> message = channel_.pop()) {
    if (message->type == MessageType::exit) exit_seen_ = true;
    pending_.push_back(std::move(*message));
  }
}

Message ProcessEndpoint::receive() {
  while (pending_.empty()) {
    pull();
    if (!pending_.empty()) break;
    if (channel_.at_eof() || parent_gone()) return exit_message();
    channel_.wait_readable(kParentCheckMs);
  }
  Message message = std::move(pending_.front());
  pending_.pop_front();
  return message;
}

bool ProcessEndpoint::exit_requested() {
  pull();
  return exit_seen_ || channel_.at_eof();
}

void ProcessEndpoint::wait_until_exit_requested() {
  while (!exit_requested() && !parent_gone()) channel_.wait_readable(kParentCheckMs);
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

}  // namespace dlreset::data
