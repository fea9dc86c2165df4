#include "harness/data/core/worker/process_worker_pool.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include "harness/data/core/datasets/dataset.h"
#include "harness/data/core/errors.h"
#include "harness/data/core/interrupt.h"
#include "harness/data/core/worker/process_launch.h"
#include "harness/data/core/worker/slot_batch.h"
#include "harness/data/core/worker/status_check.h"
#include "harness/data/core/worker/transport/parent_only_fds.h"
#include "harness/trace/event_log.h"

namespace dlreset::data::detail {

namespace {

using Clock = ProcessWorkerPool::Clock;

constexpr int kSocketBufferBytes = 1 << 20;

/// The slots of one worker: as many as its launch asks for, within kMaxSlotBytesPerWorker.
std::shared_ptr<SharedSlots> make_slots(const WorkerLaunch& launch) {
  if (launch.slot_count <= 0 || launch.batch_samples <= 0) return nullptr;
  constexpr std::size_t kPage = 4096;
  const SlotLayout layout{launch.batch_samples, launch.dataset->sample_numel()};
  const std::size_t slot_bytes = (layout.bytes() + kPage - 1) / kPage * kPage;
  const std::size_t fit = ProcessWorkerPool::kMaxSlotBytesPerWorker / slot_bytes;
  const int count = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(fit, launch.slot_count)));
  return SharedSlots::create(count, slot_bytes, launch.config.loader);
}

int milliseconds_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<long long>(0, left.count()));
}

}  // namespace

ProcessWorkerPool::ProcessWorkerPool(StartMethod method, std::vector<WorkerLaunch> launches,
                                     LifecycleHandler on_lifecycle)
    : loader_(launches.empty() ? std::string() : launches.front().config.loader),
      on_lifecycle_(std::move(on_lifecycle)),
      death_watch_(loader_),
      readiness_(loader_) {
  workers_.reserve(launches.size());
  readiness_.add(death_watch_.fd, Kind::deaths, 0);
  try {
    for (const WorkerLaunch& launch : launches) {
      int fds[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        throw DataLoaderError(std::string("Cannot create the socket for DataLoader worker ") +
                              std::to_string(launch.config.worker_id) + ": " + std::strerror(errno) + ".");
      }
      // Room for a few whole batches (200 KB each at batch size 64) in flight, so a worker
      // hands its batch over in one send instead of waking the parent for every slice of the
      // default buffer. The kernel caps it at net.core.wmem_max; below that it is only smaller.
      const int buffer_bytes = kSocketBufferBytes;
      ::setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
      ::setsockopt(fds[0], SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
      Worker worker;
      worker.id = launch.config.worker_id;
      worker.channel = SocketChannel(fds[0]);
      try {
        worker.slots = make_slots(launch);
      } catch (...) {
        ::close(fds[1]);
        throw;
      }
      worker.channel.mark_parent_only();
      // The new worker's end too, until it is handed over: a loader forking on another thread
      // meanwhile must not pass it on to its own worker.
      register_parent_only_fd(fds[1]);
      const auto hand_over = [&] {
        unregister_parent_only_fd(fds[1]);
        ::close(fds[1]);
      };
      try {
        worker.process = WorkerProcess(method == StartMethod::spawn
                                           ? launch_spawn_worker(launch, fds[1], worker.channel, worker.slots)
                                           : launch_fork_worker(launch, fds[1], worker.slots));
      } catch (...) {
        hand_over();
        throw;
      }
      hand_over();
      if (worker.slots) {
        worker.tasks = worker.slots->tasks();
        worker.answers = worker.slots->answers();
      }
      workers_.push_back(std::move(worker));
      const std::size_t index = workers_.size() - 1;
      const Worker& added = workers_.back();
      readiness_.add(added.channel.fd(), Kind::channel, index);
      if (added.process.pidfd() >= 0) readiness_.add(added.process.pidfd(), Kind::pidfd, index);
      if (added.answers.valid()) readiness_.add(added.answers.bell_fd(), Kind::bell, index);
      WorkerDeathWatch::global().watch(watch_owner(), loader_, added.id, added.process.pid(), added.process.pidfd());
      report_spawn(workers_.back());
    }
  } catch (...) {
    shutdown(kStatusCheckInterval);  // no destructor runs for a constructor that threw
    throw;
  }
}

ProcessWorkerPool::~ProcessWorkerPool() {
  shutdown_in_destructor("worker processes", [this] { ProcessWorkerPool::shutdown(kStatusCheckInterval); });
}

void ProcessWorkerPool::wake() { readiness_.wake(); }

void ProcessWorkerPool::report_spawn(const Worker& worker) const {
  if (on_lifecycle_) on_lifecycle_(spawned_report(worker.id, worker.process.pid()));
}

void ProcessWorkerPool::record(trace::EventKind kind, const Worker& worker) const {
  trace::EventLog::global().record(trace::worker_event(kind, loader_, worker.id, worker.process.pid(),
                                                       trace::monotonic_now_s()));
}

std::string ProcessWorkerPool::name_of(const Worker& worker) const {
  return "worker " + std::to_string(worker.id) + " (pid " + std::to_string(worker.process.pid()) + ") of loader '" +
         loader_ + "'";
}

void ProcessWorkerPool::reap(Worker& worker, std::chrono::milliseconds timeout, bool kill_after) {
  // Before the pid is reaped and may be anybody's: the watch reads a dead worker's status
  // without reaping it, under the lock this takes.
  WorkerDeathWatch::global().forget(worker.process.pidfd());
  if (worker.process.reap(timeout, kill_after, [this](int pidfd) { readiness_.remove(pidfd); })) {
    record(trace::EventKind::worker_exit, worker);
  }
}

void ProcessWorkerPool::fail_dead(Worker& worker) {
  // Its pidfd fired or its socket is closed, so it is gone or exiting; give it a moment to
  // become reapable.
  reap(worker, std::chrono::seconds(2), /*kill_after=*/true);
  readiness_.remove(worker.channel.fd());
  worker.channel.close();
  throw WorkerDiedError(loader_, worker.id, worker.process.pid(), worker.process.wait_status());
}

void ProcessWorkerPool::send(int worker_id, const Message& message) {
  // A message to a worker that died is lost, and the next receive() reports the death: its
  // socket reads as closed. Throwing here instead made `iter()` itself fail or not depending
  // on whether a crashing worker had died before the iterator finished priming its tasks.
  Worker& worker = workers_.at(static_cast<std::size_t>(worker_id));
  if (message.type != MessageType::task || !worker.slots) {
    send_in_order(worker, message, Clock::time_point::max());
    return;
  }
  const int slot = worker.slots->acquire();
  const std::size_t samples = message.indices.size();
  if (slot >= 0 && samples <= worker.slots->slot_bytes() / sizeof(std::int64_t)) {
    if (gone(worker)) {
      worker.slots->release(slot);  // nobody would read it
      return;
    }
    // The indices go into the slot, where the worker collates the batch over them.
    if (samples > 0) std::memcpy(worker.slots->slot(slot), message.indices.data(), samples * sizeof(std::int64_t));
    SlotDescriptor descriptor;
    descriptor.seq = worker.order.next_to_send();
    descriptor.send_idx = message.send_idx;
    descriptor.samples = static_cast<std::int64_t>(samples);
    descriptor.slot = slot;
    // Never full while every descriptor holds its own slot; if it were, the socket takes it.
    if (worker.tasks.push(descriptor)) {
      worker.order.claim_send();
      return;
    }
  }
  if (slot < 0) ++batches_without_a_slot_;  // the consumer holds them all: inline
  Message& task = worker.outgoing;
  task = message;
  task.seq = worker.order.claim_send();
  task.slot = slot;
  bool sent = false;
  try {
    sent = send_reading(worker, task, Clock::time_point::max());
  } catch (...) {
    if (task.slot >= 0) worker.slots->release(task.slot);  // interrupted: the task never arrived
    throw;
  }
  if (!sent && task.slot >= 0) worker.slots->release(task.slot);
}

bool ProcessWorkerPool::send_in_order(Worker& worker, const Message& message, Clock::time_point deadline) {
  if (message.type == MessageType::exit && worker.tasks.valid()) worker.tasks.close();
  Message& out = worker.outgoing;
  out = message;
  out.seq = worker.order.claim_send();
  return send_reading(worker, out, deadline);
}

bool ProcessWorkerPool::send_reading(Worker& worker, const Message& message, Clock::time_point deadline) {
  // What the wait below needs, behind one reference: a callable of two pointers is kept inside
  // the std::function, where five captures made it allocate at every send.
  struct RoomWait {
    Worker& worker;
    Clock::time_point deadline;
    bool interruptible;
    bool interrupted;
  } room{worker, deadline, deadline == Clock::time_point::max(), false};
  const bool sent = worker.channel.send(message, [this, &room] {
    Worker& worker = room.worker;
    const Clock::time_point deadline = room.deadline;
    const bool interruptible = room.interruptible;
    while (true) {
      // A worker hung in its dataset never makes room: only the interrupt ends this wait, or
      // cancel_sends() when another thread is stopping the one that sends.
      if (interruptible && (interrupt_requested() != 0 || sends_cancelled_.load())) {
        room.interrupted = true;
        return false;
      }
      const int left_ms =
          interruptible ? static_cast<int>(kInterruptCheckInterval.count())
                        : std::min(milliseconds_left(deadline), static_cast<int>(kInterruptCheckInterval.count()));
      // Channels at end of file are all read and would stay readable: polling them would spin.
      const ChannelWait wait = wait_for_channels(left_ms, /*skip_at_eof=*/true, &worker);
      if (gone(worker)) return false;  // its pidfd fired, or its socket closed: nobody reads
      if (wait.room) return true;
      if (wait.ready < 0 && wait.error != EINTR) return false;
      if (!interruptible && milliseconds_left(deadline) == 0) return false;
    }
  });
  if (room.interrupted) {
    // The rest of the frame can never follow, and the worker would read the next message as
    // its tail: nothing more goes over this channel.
    readiness_.remove(worker.channel.fd());
    worker.channel.close();
    worker.cut_off = true;
    throw_if_interrupted();
  }
  return sent;
}

TransportStats ProcessWorkerPool::stats() const {
  TransportStats stats;
  stats.batches_in_slots = batches_in_slots_;
  stats.batches_without_a_slot = batches_without_a_slot_;
  for (const Worker& worker : workers_) {
    stats.feature_blocks_allocated += worker.channel.feature_pool().fresh_allocations();
    if (worker.slots) stats.slots_in_use += worker.slots->in_use();
    if (worker.tasks.valid()) {
      stats.ring_descriptors += static_cast<std::int64_t>(worker.tasks.pushed() + worker.answers.pushed());
      stats.doorbells += static_cast<std::int64_t>(worker.tasks.bells_rung() + worker.answers.bells_rung());
    }
  }
  return stats;
}

const SlotDescriptor* ProcessWorkerPool::front_answer(const Worker& worker) {
  return worker.answers.valid() ? worker.answers.front() : nullptr;
}

std::optional<Message> ProcessWorkerPool::pop_in_order(Worker& worker) {
  if (!worker.held) worker.held = worker.channel.pop();
  const SlotDescriptor* answer = front_answer(worker);
  switch (worker.order.due(worker.held ? &*worker.held : nullptr, answer)) {
    case MessageOrder::Way::none: return std::nullopt;
    case MessageOrder::Way::behind:
      throw DataLoaderError("DataLoader " + name_of(worker) + " sent message " + std::to_string(worker.held->seq) +
                            " after message " + std::to_string(worker.order.last_received()) + ": a corrupt message.");
    case MessageOrder::Way::socket: {
      Message message = std::move(*worker.held);
      worker.held.reset();
      worker.order.taken();
      return message;
    }
    case MessageOrder::Way::ring: {
      // Copied before use: the memory is the worker's too.
      const SlotDescriptor descriptor = *answer;
      worker.answers.pop();
      worker.order.taken();
      return batch_message(descriptor, worker.id, worker.process.pid());
    }
  }
  return std::nullopt;
}

std::optional<Message> ProcessWorkerPool::pop_data(Worker& worker) {
  while (std::optional<Message> message = pop_in_order(worker)) {
    if (!is_lifecycle(message->type)) {
      if (take_from_slot(worker.slots.get(), *message, indices_, worker.id, worker.process.pid(), loader_)) {
        ++batches_in_slots_;
      }
      return message;
    }
    if (on_lifecycle_) on_lifecycle_(*message);
  }
  return std::nullopt;
}

ProcessWorkerPool::ChannelWait ProcessWorkerPool::wait_for_channels(int timeout_ms, bool skip_at_eof,
                                                                    const Worker* room_for) {
  poll_entries_.clear();
  poll_owners_.clear();
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    const Worker& worker = workers_[i];
    if (worker.channel.open() && !(skip_at_eof && gone(worker))) {
      const short events = &worker == room_for ? POLLIN | POLLOUT : POLLIN;
      poll_entries_.push_back({worker.channel.fd(), events, 0});
      poll_owners_.push_back({Kind::channel, i});
    }
    if (worker.process.pidfd() >= 0 && !worker.process.exited()) {
      poll_entries_.push_back({worker.process.pidfd(), POLLIN, 0});
      poll_owners_.push_back({Kind::pidfd, i});
    }
  }
  ChannelWait wait;
  for (const PollOwner& owner : poll_owners_) wait.channels += owner.kind == Kind::channel ? 1 : 0;
  if (wait.channels == 0) return wait;
  wait.ready = ::poll(poll_entries_.data(), poll_entries_.size(), timeout_ms);
  wait.error = wait.ready < 0 ? errno : 0;
  for (std::size_t e = 0; wait.ready > 0 && e < poll_entries_.size(); ++e) {
    if (poll_entries_[e].revents == 0) continue;
    const PollOwner owner = poll_owners_[e];
    Worker& worker = workers_[owner.worker];
    if (&worker == room_for && owner.kind == Kind::channel && (poll_entries_[e].revents & POLLOUT) != 0) {
      wait.room = true;
    }
    if (owner.kind == Kind::pidfd) {
      note_exit(worker);
    } else {
      worker.channel.read_available();
    }
  }
  return wait;
}

void ProcessWorkerPool::note_exit(Worker& worker) {
  // Gone, though a process it started may hold its socket open: what it sent before it died is
  // all in the socket now, so read it, to deliver it before the death.
  worker.process.mark_exited();
  readiness_.remove(worker.process.pidfd());  // it stays readable: receive()'s wait would never sleep again
  if (worker.channel.open()) worker.channel.read_available();
}

ProcessWorkerPool::ChannelWait ProcessWorkerPool::wait_for_answers(int timeout_ms) {
  ChannelWait wait;
  for (const Worker& worker : workers_) wait.channels += worker.channel.open() ? 1 : 0;
  if (wait.channels == 0) return wait;
  bool due = false;
  for (Worker& worker : workers_) {
    if (!worker.answers.valid()) continue;
    worker.answers.prepare_to_wait();
    // Looked at again after saying so: a batch pushed before that rang no bell.
    due = due || worker.order.is_due(front_answer(worker));
  }
  // One epoll_wait, whatever W: poll() registered every worker's channel, pidfd and bell with
  // the kernel, and took them out again, at each wait for a batch.
  wait.ready = readiness_.wait(due ? 0 : timeout_ms, wait.woken);
  wait.error = wait.ready < 0 ? errno : 0;
  for (Worker& worker : workers_) {
    if (worker.answers.valid()) worker.answers.finish_wait(/*rang=*/false);  // edge-triggered: nothing to take
  }
  for (const ReadinessSet::Ready& ready : readiness_.ready()) {
    if (ready.kind == Kind::deaths) {
      wait.deaths = true;
      continue;
    }
    if (ready.worker >= workers_.size()) continue;
    Worker& worker = workers_[ready.worker];
    if (ready.kind == Kind::pidfd && !worker.process.exited()) {
      note_exit(worker);
    } else if (ready.kind == Kind::channel && worker.channel.open() && !worker.channel.at_eof()) {
      worker.channel.read_available();
      if (worker.channel.at_eof()) readiness_.remove(worker.channel.fd());  // readable for good now
    }
  }
  return wait;
}

std::optional<Message> ProcessWorkerPool::receive(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    // Deliver what is buffered first, even from a worker that died after sending it.
    for (std::size_t k = 0; k < workers_.size(); ++k) {
      Worker& worker = workers_[(next_ + k) % workers_.size()];
      if (std::optional<Message> message = pop_data(worker)) {
        next_ = (next_ + k + 1) % workers_.size();
        return message;
      }
    }
    for (Worker& worker : workers_) {
      if (gone(worker) && !shut_down_) fail_dead(worker);
    }
    throw_if_interrupted();
    const int left_ms = milliseconds_left(deadline);
    const int slice_ms = std::min(left_ms, static_cast<int>(kInterruptCheckInterval.count()));
    const ChannelWait wait = wait_for_answers(slice_ms);
    if (wait.channels == 0 || wait.woken) return std::nullopt;
    if (wait.deaths) {
      // A watched worker died. Ours are this pool's to report, above, with what they sent
      // first; another loader's is the caller's to raise (throw_if_a_worker_died): this may be
      // the pin-memory thread, which must not end for it.
      WorkerDeathWatch& watch = WorkerDeathWatch::global();
      watch.look_now();
      if (watch.has_news(watch_owner())) return std::nullopt;
    }
    if (wait.ready < 0 && wait.error != EINTR) {
      throw DataLoaderError(std::string("Waiting for DataLoader workers failed: ") + std::strerror(wait.error) + ".");
    }
    if (wait.ready <= 0 && left_ms == 0) return std::nullopt;
  }
}

void ProcessWorkerPool::shutdown(std::chrono::milliseconds grace) {
  if (shut_down_) return;
  shut_down_ = true;
  // Off the watch before they are told to go: a deliberate exit is not a death.
  for (Worker& worker : workers_) WorkerDeathWatch::global().forget(worker.process.pidfd());
  Message exit;
  exit.type = MessageType::exit;
  const auto deadline = Clock::now() + grace;
  for (Worker& worker : workers_) {
    if (worker.process.reaped()) continue;
    record(trace::EventKind::worker_shutdown, worker);
    // A dead worker just fails to read it; one that reads nothing before the deadline is
    // killed below.
    send_in_order(worker, exit, deadline);
  }
  // Drain until every worker has closed its socket: batches are dropped, load reports count.
  while (true) {
    for (Worker& worker : workers_) pop_data(worker);
    const int left_ms = milliseconds_left(deadline);
    if (left_ms == 0) break;
    const ChannelWait wait = wait_for_channels(left_ms, /*skip_at_eof=*/true);
    if (wait.channels == 0 || (wait.ready < 0 && wait.error != EINTR)) break;
  }
  for (Worker& worker : workers_) {
    pop_data(worker);
    // One that closed its socket is on its way out; one that did not is stuck, and one cut off
    // was never told to go: kill them.
    const auto wait = gone(worker) && !worker.cut_off ? std::chrono::milliseconds(milliseconds_left(deadline) + 1000)
                                                      : std::chrono::milliseconds(0);
    reap(worker, wait, /*kill_after=*/true);
    readiness_.remove(worker.channel.fd());
    worker.channel.close();
  }
}

std::vector<std::int64_t> ProcessWorkerPool::pids() const {
  std::vector<std::int64_t> pids;
  for (const Worker& worker : workers_) pids.push_back(worker.process.pid());
  return pids;
}

}  // namespace dlreset::data::detail
