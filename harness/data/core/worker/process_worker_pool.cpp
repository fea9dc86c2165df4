#include "harness/data/core/worker/process_worker_pool.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include "harness/data/core/errors.h"
#include "harness/data/core/interrupt.h"
#include "harness/data/core/worker/status_check.h"
#include "harness/trace/event_log.h"

namespace dlreset::data::detail {

namespace {

using Clock = ProcessWorkerPool::Clock;

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
      workers_.push_back(start_process_worker(method, launch));
      const std::size_t index = workers_.size() - 1;
      const Worker& added = workers_.back();
      readiness_.add(added.connection.fd(), Kind::channel, index);
      if (added.process.pidfd() >= 0) readiness_.add(added.process.pidfd(), Kind::pidfd, index);
      if (added.connection.answer_bell_fd() >= 0) readiness_.add(added.connection.answer_bell_fd(), Kind::bell, index);
      WorkerDeathWatch::global().watch(watch_owner(), loader_, added.connection.id(), added.process.pid(),
                                       added.process.pidfd());
      if (on_lifecycle_) on_lifecycle_(spawned_report(added.connection.id(), added.process.pid()));
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

void ProcessWorkerPool::record(trace::EventKind kind, const Worker& worker) const {
  trace::EventLog::global().record(trace::worker_event(kind, loader_, worker.connection.id(), worker.process.pid(),
                                                       trace::monotonic_now_s()));
}

void ProcessWorkerPool::retire(Worker& worker, std::chrono::milliseconds timeout) {
  // Before the pid is reaped and may be anybody's: the watch reads a dead worker's status
  // without reaping it, under the lock this takes.
  WorkerDeathWatch::global().forget(worker.process.pidfd());
  if (worker.process.reap(timeout, /*kill_after=*/true, [this](int pidfd) { readiness_.remove(pidfd); })) {
    record(trace::EventKind::worker_exit, worker);
  }
  readiness_.remove(worker.connection.fd());
  worker.connection.close();
}

void ProcessWorkerPool::fail_dead(Worker& worker) {
  retire(worker, std::chrono::seconds(2));  // its pidfd fired or its socket closed: it is gone or exiting
  throw WorkerDiedError(loader_, worker.connection.id(), worker.process.pid(), worker.process.wait_status());
}

void ProcessWorkerPool::send(int worker_id, const Message& message) {
  // A message to a worker that died is lost, and the next receive() reports the death: whether
  // a send fails must not depend on when a crashing worker died.
  Worker& worker = workers_.at(static_cast<std::size_t>(worker_id));
  if (!gone(worker)) send_reading(worker, message, Clock::time_point::max());
}

bool ProcessWorkerPool::send_reading(Worker& worker, const Message& message, Clock::time_point deadline) {
  // What the wait below needs, behind one reference, so that the std::function holding the
  // callable keeps it inline instead of allocating at every send.
  struct RoomWait {
    Worker& worker;
    Clock::time_point deadline;
    bool interruptible;
    bool interrupted;
  } room{worker, deadline, deadline == Clock::time_point::max(), false};
  bool sent = false;
  try {
    sent = worker.connection.send(message, [this, &room] {
      readiness_.narrow(room.worker.connection.fd(), static_cast<std::size_t>(&room.worker - workers_.data()));
      while (true) {
        // A worker hung in its dataset never makes room: only the interrupt ends this wait, or
        // cancel_sends() when another thread is stopping the one that sends.
        if (room.interruptible && (interrupt_requested() != 0 || sends_cancelled_.load())) {
          room.interrupted = true;
          return false;
        }
        const int slice_ms = static_cast<int>(kInterruptCheckInterval.count());
        const Wait wait =
            this->wait(room.interruptible ? slice_ms : std::min(milliseconds_left(room.deadline), slice_ms),
                       /*for_batches=*/false);
        if (gone(room.worker)) return false;  // its pidfd fired, or its socket closed: nobody reads
        if (wait.room) return true;
        if (wait.ready < 0 && wait.error != EINTR) return false;
        if (!room.interruptible && milliseconds_left(room.deadline) == 0) return false;
      }
    });
  } catch (...) {
    readiness_.widen();
    throw;
  }
  readiness_.widen();
  if (room.interrupted) {
    // The rest of the frame can never follow, and the worker would read the next message as
    // its tail: nothing more goes over this channel.
    readiness_.remove(worker.connection.fd());
    worker.connection.close(/*frame_half_sent=*/true);
    throw_if_interrupted();
  }
  return sent;
}

TransportStats ProcessWorkerPool::stats() const {
  TransportStats stats;
  for (const Worker& worker : workers_) worker.connection.add_counts(stats);
  return stats;
}

void ProcessWorkerPool::read(Worker& worker) {
  if (!worker.connection.at_eof()) worker.connection.read();
  if (worker.connection.at_eof()) readiness_.remove(worker.connection.fd());
}

void ProcessWorkerPool::note_exit(Worker& worker) {
  // Gone, though a process it started may hold its socket open: what it sent before it died is
  // all in the socket now, so read it, to deliver it before the death.
  worker.process.mark_exited();
  readiness_.remove(worker.process.pidfd());  // it stays readable: a wait would never sleep again
  read(worker);
}

ProcessWorkerPool::Wait ProcessWorkerPool::wait(int timeout_ms, bool for_batches) {
  Wait wait;
  for (const Worker& worker : workers_) {
    wait.channels += worker.connection.open() && (for_batches || !gone(worker)) ? 1 : 0;
  }
  if (wait.channels == 0) return wait;
  bool due = false;
  for (Worker& worker : workers_) due = (for_batches && worker.connection.prepare_to_wait()) || due;
  wait.ready = readiness_.wait(due ? 0 : timeout_ms, wait.woken);
  wait.error = wait.ready < 0 ? errno : 0;
  for (Worker& worker : workers_) worker.connection.finish_wait(for_batches);
  for (const ReadinessSet::Ready& ready : readiness_.ready()) {
    wait.deaths = wait.deaths || ready.kind == Kind::deaths;
    if (ready.kind == Kind::deaths || ready.worker >= workers_.size()) continue;
    Worker& worker = workers_[ready.worker];
    wait.room = wait.room || ready.writable;
    if (ready.kind == Kind::pidfd && !worker.process.exited()) note_exit(worker);
    if (ready.kind == Kind::channel) read(worker);
  }
  return wait;
}

std::optional<Message> ProcessWorkerPool::receive(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    // Deliver what is buffered first, even from a worker that died after sending it.
    for (std::size_t k = 0; k < workers_.size(); ++k) {
      Worker& worker = workers_[(next_ + k) % workers_.size()];
      if (std::optional<Message> message = worker.connection.pop_data(indices_, on_lifecycle_)) {
        next_ = (next_ + k + 1) % workers_.size();
        return message;
      }
    }
    for (Worker& worker : workers_) {
      if (gone(worker) && !shut_down_) fail_dead(worker);
    }
    throw_if_interrupted();
    const int left_ms = milliseconds_left(deadline);
    const Wait wait = this->wait(std::min(left_ms, static_cast<int>(kInterruptCheckInterval.count())),
                                 /*for_batches=*/true);
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
    if (!gone(worker)) send_reading(worker, exit, deadline);
  }
  // Drain until every worker has closed its socket: batches are dropped, load reports count.
  readiness_.narrow();
  while (true) {
    for (Worker& worker : workers_) worker.connection.pop_data(indices_, on_lifecycle_);
    const int left_ms = milliseconds_left(deadline);
    if (left_ms == 0) break;
    const Wait wait = this->wait(left_ms, /*for_batches=*/false);
    if (wait.channels == 0 || (wait.ready < 0 && wait.error != EINTR)) break;
  }
  readiness_.widen();
  for (Worker& worker : workers_) {
    worker.connection.pop_data(indices_, on_lifecycle_);
    // One that closed its socket is on its way out; one that did not is stuck, and one cut off
    // was never told to go: kill them.
    const bool leaving = gone(worker) && !worker.connection.cut_off();
    retire(worker, std::chrono::milliseconds(leaving ? milliseconds_left(deadline) + 1000 : 0));
  }
}

std::vector<std::int64_t> ProcessWorkerPool::pids() const {
  std::vector<std::int64_t> pids;
  for (const Worker& worker : workers_) pids.push_back(worker.process.pid());
  return pids;
}

}  // namespace dlreset::data::detail
