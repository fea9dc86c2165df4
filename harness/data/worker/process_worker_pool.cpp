#include "harness/data/worker/process_worker_pool.h"

#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "harness/data/dataset.h"
#include "harness/data/errors.h"
#include "harness/data/interrupt.h"
#include "harness/data/worker/parent_only_fds.h"
#include "harness/data/worker/process_launch.h"
#include "harness/data/worker/status_check.h"
#include "harness/data/worker/thread_worker_pool.h"
#include "harness/trace/event_log.h"

namespace dlreset::data {

namespace {

using Clock = ProcessWorkerPool::Clock;

constexpr int kSocketBufferBytes = 1 << 20;

/// pidfd_open(2) through syscall(): Debian 12's header declares it without C linkage.
int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

/// How often reap() asks waitpid() about a child it cannot wait for through a pidfd.
constexpr std::chrono::milliseconds kReapPollInterval{1};

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
    : on_lifecycle_(std::move(on_lifecycle)) {
  if (!launches.empty()) loader_ = launches.front().config.loader;
  workers_.reserve(launches.size());
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    throw DataLoaderError("Cannot create the wake-up descriptor of loader '" + loader_ +
                          "': " + std::strerror(errno) + ". Raise the limit on open files (ulimit -n).");
  }
  register_parent_only_fd(wake_fd_);  // no forked worker needs it
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    const int error = errno;
    unregister_parent_only_fd(wake_fd_);
    ::close(wake_fd_);
    throw DataLoaderError("Cannot create the epoll descriptor of loader '" + loader_ + "': " + std::strerror(error) +
                          ". Raise the limit on open files (ulimit -n).");
  }
  register_parent_only_fd(epoll_fd_);
  try {
    watch(wake_fd_, {PollOwner::Kind::wake, 0});
    for (const WorkerLaunch& launch : launches) {
      int fds[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        throw DataLoaderError(std::string("Cannot create the socket for DataLoader worker ") +
                              std::to_string(launch.config.worker_id) + ": " +
                              std::strerror(errno) + ".");
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
        worker.pid = method == StartMethod::spawn
                         ? launch_spawn_worker(launch, fds[1], worker.channel, worker.slots)
                         : launch_fork_worker(launch, fds[1], worker.slots);
      } catch (...) {
        hand_over();
        throw;
      }
      hand_over();
      worker.pidfd = open_pidfd(worker.pid);
      // A worker forked later, by this pool or another, must not keep it: it is the main
      // process's hold on this worker.
      if (worker.pidfd >= 0) register_parent_only_fd(worker.pidfd);
      if (worker.slots) {
        worker.tasks = worker.slots->tasks();
        worker.answers = worker.slots->answers();
      }
      workers_.push_back(std::move(worker));
      const std::size_t index = workers_.size() - 1;
      const Worker& added = workers_.back();
      watch(added.channel.fd(), {PollOwner::Kind::channel, index});
      if (added.pidfd >= 0) watch(added.pidfd, {PollOwner::Kind::pidfd, index});
      if (added.answers.valid()) watch(added.answers.bell_fd(), {PollOwner::Kind::bell, index});
      report_spawn(workers_.back());
    }
  } catch (...) {
    shutdown(kStatusCheckInterval);
    close_own_descriptors();  // no destructor runs for a constructor that threw
    throw;
  }
  events_.resize(3 * workers_.size() + 1);
}

ProcessWorkerPool::~ProcessWorkerPool() {
  shutdown(kStatusCheckInterval);
  close_own_descriptors();
}

void ProcessWorkerPool::close_own_descriptors() {
  for (const int fd : {wake_fd_, epoll_fd_}) {
    unregister_parent_only_fd(fd);
    ::close(fd);
  }
}

void ProcessWorkerPool::watch(int fd, PollOwner owner) {
  epoll_event event{};
  // A bell's eventfd is edge-triggered: every ring is one event, and its count is never read,
  // a system call less a wake-up. The rest stay readable until read, as poll() sees them.
  event.events = owner.kind == PollOwner::Kind::bell ? EPOLLIN | EPOLLET : EPOLLIN;
  event.data.u64 = (static_cast<std::uint64_t>(owner.kind) << 32) | owner.worker;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    throw DataLoaderError("Cannot watch a descriptor of loader '" + loader_ + "' with epoll: " +
                          std::strerror(errno) + ". Raise the limit on open files (ulimit -n).");
  }
}

void ProcessWorkerPool::unwatch(int fd) {
  // A forked worker may still hold a copy of it for a moment, which would keep it registered.
  if (fd >= 0) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

void ProcessWorkerPool::wake() {
  const std::uint64_t one = 1;
  // Non-blocking: a counter already pending is wake-up enough.
  [[maybe_unused]] const ssize_t written = ::write(wake_fd_, &one, sizeof one);
}

void ProcessWorkerPool::report_spawn(const Worker& worker) const {
  if (on_lifecycle_) on_lifecycle_(spawned_report(worker.id, worker.pid));
}

void ProcessWorkerPool::record(trace::EventKind kind, const Worker& worker) const {
  trace::EventLog::global().record(trace::worker_event(kind, loader_, worker.id, worker.pid,
                                                       trace::monotonic_now_s()));
}

void ProcessWorkerPool::reap(Worker& worker, std::chrono::milliseconds timeout, bool kill_after) {
  if (worker.reaped || worker.pid <= 0) return;
  int status = 0;
  pid_t done = 0;
  if (worker.pidfd >= 0) {
    pollfd entry{worker.pidfd, POLLIN, 0};
    while (::poll(&entry, 1, static_cast<int>(timeout.count())) < 0 && errno == EINTR) {
    }
    done = ::waitpid(worker.pid, &status, WNOHANG);
  } else {
    // No pidfd: pidfd_open needs Linux 5.3, and valgrind 3.19 does not know the call. Without
    // this loop the grace period was zero and a worker on its way out was killed.
    const auto deadline = Clock::now() + timeout;
    while ((done = ::waitpid(worker.pid, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
      std::this_thread::sleep_for(kReapPollInterval);
    }
  }
  if (done == 0 && kill_after) {
    ::kill(worker.pid, SIGKILL);
    while ((done = ::waitpid(worker.pid, &status, 0)) < 0 && errno == EINTR) {
    }
  }
  if (done == worker.pid) {
    worker.reaped = true;
    worker.wait_status = status;
    record(trace::EventKind::worker_exit, worker);
  }
  // After the last try too, even unreaped (the program reaped it itself: ECHILD): a pidfd left
  // open would stay on the parent-only list, and its number, once reused for a file of the
  // program's, would be closed in every later fork worker.
  if ((worker.reaped || kill_after) && worker.pidfd >= 0) {
    unwatch(worker.pidfd);
    unregister_parent_only_fd(worker.pidfd);
    ::close(worker.pidfd);
    worker.pidfd = -1;
  }
}

void ProcessWorkerPool::fail_dead(Worker& worker) {
  // Its pidfd fired or its socket is closed, so it is gone or exiting; give it a moment to
  // become reapable.
  reap(worker, std::chrono::seconds(2), /*kill_after=*/true);
  unwatch(worker.channel.fd());
  worker.channel.close();
  throw WorkerDiedError(loader_, worker.id, worker.pid, worker.wait_status);
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
    descriptor.seq = worker.sent_seq + 1;
    descriptor.send_idx = message.send_idx;
    descriptor.samples = static_cast<std::int64_t>(samples);
    descriptor.slot = slot;
    // Never full while every descriptor holds its own slot; if it were, the socket takes it.
    if (worker.tasks.push(descriptor)) {
      ++worker.sent_seq;
      return;
    }
  }
  if (slot < 0) ++batches_without_a_slot_;  // the consumer holds them all: inline
  Message& task = worker.outgoing;
  task = message;
  task.seq = ++worker.sent_seq;
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
  out.seq = ++worker.sent_seq;
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
      const int left_ms = interruptible ? static_cast<int>(kInterruptCheckInterval.count())
                                        : std::min(milliseconds_left(deadline),
                                                   static_cast<int>(kInterruptCheckInterval.count()));
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
    unwatch(worker.channel.fd());
    worker.channel.close();
    worker.cut_off = true;
    throw_if_interrupted();
  }
  return sent;
}

void ProcessWorkerPool::take_from_slot(Worker& worker, Message& message) {
  if (message.slot < 0) return;
  const auto corrupt = [this, &worker](const std::string& what) {
    return DataLoaderError("DataLoader worker " + std::to_string(worker.id) + " (pid " +
                           std::to_string(worker.pid) + ") of loader '" + loader_ + "' " + what +
                           ": a corrupt message.");
  };
  if (!worker.slots || message.slot >= worker.slots->count()) {
    throw corrupt("answered with shared-memory slot " + std::to_string(message.slot) + ", which it does not have");
  }
  if (message.type != MessageType::batch || message.slot_samples < 0) {
    worker.slots->release(message.slot);  // an error, or a batch that did not fit: inline
    return;
  }
  const std::int64_t numel = shape_numel(message.batch.sample_shape);
  const SlotLayout layout{message.slot_samples, numel};
  const std::size_t slot_bytes = worker.slots->slot_bytes();
  // Bounds first, so that a corrupt count cannot overflow the layout's arithmetic.
  const bool in_bounds = numel >= 0 && static_cast<std::size_t>(numel) <= slot_bytes / sizeof(float) &&
                         static_cast<std::size_t>(message.slot_samples) <= slot_bytes / (2 * sizeof(std::int64_t));
  if (!in_bounds || layout.bytes() > slot_bytes) {
    worker.slots->release(message.slot);
    throw corrupt("described a batch of " + std::to_string(message.slot_samples) + " samples that does not fit its " +
                  std::to_string(slot_bytes) + "-byte slot");
  }
  const auto* indices = reinterpret_cast<const std::int64_t*>(worker.slots->slot(message.slot));
  const auto samples = static_cast<std::size_t>(layout.samples);
  message.batch.indices = IndexBuffer(samples, IndexBuffer::allocator_type(indices_));
  std::copy(indices, indices + samples, message.batch.indices.begin());
  // The labels and features stay in the slot; the buffers, then the tensors, hold them there.
  BatchBlocks blocks = worker.slots->hand_over(message.slot, layout);
  const std::size_t features = samples * static_cast<std::size_t>(numel);
  if (samples > 0) message.batch.labels = LabelBuffer(samples, LabelBuffer::allocator_type(std::move(blocks.labels)));
  if (features > 0) {
    message.batch.features = FeatureBuffer(features, FeatureBuffer::allocator_type(std::move(blocks.features)));
  }
  ++batches_in_slots_;
}

std::int64_t ProcessWorkerPool::feature_blocks_allocated() const {
  std::int64_t blocks = 0;
  for (const Worker& worker : workers_) blocks += worker.channel.feature_pool().fresh_allocations();
  return blocks;
}

int ProcessWorkerPool::slots_in_use() const {
  int in_use = 0;
  for (const Worker& worker : workers_) in_use += worker.slots ? worker.slots->in_use() : 0;
  return in_use;
}

std::int64_t ProcessWorkerPool::ring_descriptors() const {
  std::int64_t pushed = 0;
  for (const Worker& worker : workers_) {
    if (worker.tasks.valid()) pushed += static_cast<std::int64_t>(worker.tasks.pushed() + worker.answers.pushed());
  }
  return pushed;
}

std::int64_t ProcessWorkerPool::doorbells() const {
  std::int64_t rung = 0;
  for (const Worker& worker : workers_) {
    if (worker.tasks.valid()) rung += static_cast<std::int64_t>(worker.tasks.bells_rung() + worker.answers.bells_rung());
  }
  return rung;
}

bool ProcessWorkerPool::answer_due(const Worker& worker) {
  const SlotDescriptor* descriptor = worker.answers.valid() ? worker.answers.front() : nullptr;
  return descriptor != nullptr && descriptor->seq == worker.received_seq + 1;
}

std::optional<Message> ProcessWorkerPool::pop_in_order(Worker& worker) {
  const std::int64_t due = worker.received_seq + 1;
  if (!worker.held) worker.held = worker.channel.pop();
  if (worker.held && worker.held->seq < due) {
    throw DataLoaderError("DataLoader worker " + std::to_string(worker.id) + " (pid " + std::to_string(worker.pid) +
                          ") of loader '" + loader_ + "' sent message " + std::to_string(worker.held->seq) +
                          " after message " + std::to_string(worker.received_seq) + ": a corrupt message.");
  }
  if (worker.held && worker.held->seq == due) {
    Message message = std::move(*worker.held);
    worker.held.reset();
    worker.received_seq = due;
    return message;
  }
  if (!answer_due(worker)) return std::nullopt;
  // Copied before use: the memory is the worker's too.
  const SlotDescriptor descriptor = *worker.answers.front();
  worker.answers.pop();
  worker.received_seq = due;
  Message message;
  message.type = MessageType::batch;
  message.worker_id = worker.id;
  message.seq = due;
  message.send_idx = descriptor.send_idx;
  message.pid = worker.pid;
  message.slot = descriptor.slot;
  message.slot_samples = descriptor.samples;
  message.time_s = descriptor.time_s;
  const int dims = std::clamp(descriptor.dims, 0, SlotDescriptor::kMaxDims);
  message.batch.sample_shape = SampleShape(descriptor.shape, descriptor.shape + dims);
  return message;
}

std::optional<Message> ProcessWorkerPool::pop_data(Worker& worker) {
  while (std::optional<Message> message = pop_in_order(worker)) {
    if (!is_lifecycle(message->type)) {
      take_from_slot(worker, *message);
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
      poll_owners_.push_back({PollOwner::Kind::channel, i});
    }
    if (worker.pidfd >= 0 && !worker.exited) {
      poll_entries_.push_back({worker.pidfd, POLLIN, 0});
      poll_owners_.push_back({PollOwner::Kind::pidfd, i});
    }
  }
  ChannelWait wait;
  for (const PollOwner& owner : poll_owners_) wait.channels += owner.kind == PollOwner::Kind::channel ? 1 : 0;
  if (wait.channels == 0) return wait;
  wait.ready = ::poll(poll_entries_.data(), poll_entries_.size(), timeout_ms);
  wait.error = wait.ready < 0 ? errno : 0;
  for (std::size_t e = 0; wait.ready > 0 && e < poll_entries_.size(); ++e) {
    if (poll_entries_[e].revents == 0) continue;
    const PollOwner owner = poll_owners_[e];
    Worker& worker = workers_[owner.worker];
    if (&worker == room_for && owner.kind == PollOwner::Kind::channel && (poll_entries_[e].revents & POLLOUT) != 0) {
      wait.room = true;
    }
    if (owner.kind == PollOwner::Kind::pidfd) {
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
  worker.exited = true;
  unwatch(worker.pidfd);  // it stays readable: receive()'s wait would never sleep again
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
    due = due || answer_due(worker);
  }
  // One epoll_wait, whatever W: poll() registered every worker's channel, pidfd and bell with
  // the kernel, and took them out again, at each wait for a batch.
  wait.ready = ::epoll_wait(epoll_fd_, events_.data(), static_cast<int>(events_.size()), due ? 0 : timeout_ms);
  wait.error = wait.ready < 0 ? errno : 0;
  for (Worker& worker : workers_) {
    if (worker.answers.valid()) worker.answers.finish_wait(/*rang=*/false);  // edge-triggered: nothing to take
  }
  for (int e = 0; e < wait.ready; ++e) {
    const auto kind = static_cast<PollOwner::Kind>(events_[static_cast<std::size_t>(e)].data.u64 >> 32);
    const auto index = static_cast<std::size_t>(events_[static_cast<std::size_t>(e)].data.u64 & 0xffffffffu);
    if (kind == PollOwner::Kind::wake) {
      std::uint64_t count = 0;
      [[maybe_unused]] const ssize_t got = ::read(wake_fd_, &count, sizeof count);
      wait.woken = true;
      continue;
    }
    if (index >= workers_.size()) continue;
    Worker& worker = workers_[index];
    if (kind == PollOwner::Kind::pidfd && !worker.exited) {
      note_exit(worker);
    } else if (kind == PollOwner::Kind::channel && worker.channel.open() && !worker.channel.at_eof()) {
      worker.channel.read_available();
      if (worker.channel.at_eof()) unwatch(worker.channel.fd());  // readable for good now
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
    if (wait.ready < 0 && wait.error != EINTR) {
      throw DataLoaderError(std::string("Waiting for DataLoader workers failed: ") +
                            std::strerror(wait.error) + ".");
    }
    if (wait.ready <= 0 && left_ms == 0) return std::nullopt;
  }
}

void ProcessWorkerPool::shutdown(std::chrono::milliseconds grace) {
  if (shut_down_) return;
  shut_down_ = true;
  Message exit;
  exit.type = MessageType::exit;
  const auto deadline = Clock::now() + grace;
  for (Worker& worker : workers_) {
    if (worker.reaped) continue;
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
    const auto wait = gone(worker) && !worker.cut_off
                          ? std::chrono::milliseconds(milliseconds_left(deadline) + 1000)
                          : std::chrono::milliseconds(0);
    reap(worker, wait, /*kill_after=*/true);
    unwatch(worker.channel.fd());
    worker.channel.close();
  }
}

std::vector<std::int64_t> ProcessWorkerPool::pids() const {
  std::vector<std::int64_t> pids;
  for (const Worker& worker : workers_) pids.push_back(worker.pid);
  return pids;
}

Message spawned_report(int worker_id, std::int64_t pid) {
  Message spawned;
  spawned.type = MessageType::spawned;
  spawned.worker_id = worker_id;
  spawned.pid = pid;
  spawned.time_s = trace::monotonic_now_s();
  return spawned;
}

std::unique_ptr<WorkerPool> start_worker_pool(StartMethod method, std::vector<WorkerLaunch> launches,
                                              LifecycleHandler on_lifecycle) {
  if (method == StartMethod::thread) {
    return std::make_unique<ThreadWorkerPool>(std::move(launches), std::move(on_lifecycle));
  }
  return std::make_unique<ProcessWorkerPool>(method, std::move(launches), std::move(on_lifecycle));
}

}  // namespace dlreset::data
