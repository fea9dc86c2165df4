// The process back-ends (fork and spawn): one child process and one socket per worker.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/data/core/memory/block_pool.h"
#include "harness/data/core/worker/process_launch.h"
#include "harness/data/core/worker/readiness_set.h"
#include "harness/data/core/worker/worker_death_watch.h"
#include "harness/data/core/worker/worker_pool.h"

namespace dlreset::trace {
enum class EventKind;  // harness/trace/event_log.h, which the users of this header need not see.
}  // namespace dlreset::trace

namespace dlreset::data::detail {

/// Each worker collates its batches into its own shared-memory slots, and its connection
/// (transport/worker_connection.h) carries tasks and batches in them as descriptors on rings,
/// everything else over its socket, in one order per direction. The pool waits for all its
/// workers at once, through one ReadinessSet: receive() on every worker's socket, answer bell
/// and pidfd, the wake-up and the death watch; a send waiting for room and shutdown on the
/// workers' sockets and pidfds alone. A worker that dies is seen at once, by its pidfd, even
/// when a process it started still holds its socket open; without pidfds (before Linux 5.3, or
/// under valgrind), by its socket's end of file. It is reaped with waitpid and reported with its
/// signal. Its workers are also on the process's WorkerDeathWatch from their start until it
/// shuts them down, so that their death stops whatever loader the main thread reads, and that
/// watch's descriptor is in receive()'s wait, so that another loader's dead worker ends a wait
/// for this one's batch.
// NOLINTNEXTLINE(cppcoreguidelines-special-member-functions): WorkerPool deletes copying, and moving with it.
class ProcessWorkerPool final : public WorkerPool {
 public:
  using Clock = std::chrono::steady_clock;

  ProcessWorkerPool(StartMethod method, std::vector<WorkerLaunch> launches, LifecycleHandler on_lifecycle);
  ~ProcessWorkerPool() override;

  void send(int worker_id, const Message& message) override;
  std::optional<Message> receive(std::chrono::milliseconds timeout) override;
  void shutdown(std::chrono::milliseconds grace) override;
  std::vector<std::int64_t> pids() const override;
  void wake() override;
  void cancel_sends() override { sends_cancelled_.store(true); }
  TransportStats stats() const override;

 private:
  using Worker = ProcessWorker;
  using Kind = ReadinessSet::Kind;

  /// What one wait() saw.
  struct Wait {
    std::size_t channels = 0;  ///< How many channels were waited on; 0: none was open.
    int ready = 0;             ///< epoll_wait's result: how many were ready, 0 on a timeout, -1.
    int error = 0;             ///< errno when `ready` is -1.
    bool room = false;         ///< The channel of the send that narrowed the set can take more.
    bool woken = false;        ///< wake() was called (a wait for batches only).
    bool deaths = false;       ///< The death watch's descriptor was ready (a wait for batches only).
  };
  /// Waits up to `timeout_ms` and reads what came. `for_batches`: receive()'s wait, on every open
  /// channel, with the answer rings told that it sleeps; otherwise only on the channels of
  /// workers not gone, in the set narrow() left.
  Wait wait(int timeout_ms, bool for_batches);
  /// Reads `worker`'s socket, and takes it out of the wait once it is at end of file, where it
  /// would stay readable for good.
  void read(Worker& worker);
  /// Marks `worker` exited (its pidfd fired) and reads what it sent before it died.
  void note_exit(Worker& worker);
  /// Sends to `worker`, reading every channel while its socket is full: a worker blocked
  /// sending a batch reads no message, so a main process that only waited would deadlock with
  /// it once a task is larger than the socket's buffer. Gives the message up when the worker
  /// dies, or at `deadline`. With no deadline, an interrupt request ends the wait too: the
  /// frame is then half sent, so the channel is closed and InterruptedError thrown.
  bool send_reading(Worker& worker, const Message& message, Clock::time_point deadline);
  /// Reaps `worker` (WorkerProcess::reap), killing it if it has not exited after `timeout`,
  /// with its exit recorded, and closes its channel, each out of the wait set first.
  void retire(Worker& worker, std::chrono::milliseconds timeout);
  [[noreturn]] void fail_dead(Worker& worker);
  /// True once the worker is gone: its pidfd fired or its socket reached end of file.
  static bool gone(const Worker& worker) { return worker.process.exited() || worker.connection.at_eof(); }
  /// Records an event of `kind` about `worker` in the event log.
  void record(trace::EventKind kind, const Worker& worker) const;
  /// Who this pool is to the death watch: the WorkerPool its users hold.
  const void* watch_owner() const { return static_cast<const WorkerPool*>(this); }

  /// The pool's hold on the process's WorkerDeathWatch, let go when the pool goes, even from a
  /// constructor that threw.
  struct DeathWatchHold {
    explicit DeathWatchHold(const std::string& loader) : fd(WorkerDeathWatch::global().hold(loader)) {}
    ~DeathWatchHold() { WorkerDeathWatch::global().let_go(); }
    DeathWatchHold(const DeathWatchHold&) = delete;
    DeathWatchHold& operator=(const DeathWatchHold&) = delete;
    int fd;  ///< The watch's descriptor, in `readiness_`.
  };

  std::string loader_;
  LifecycleHandler on_lifecycle_;
  std::vector<Worker> workers_;
  /// The index lists of batches taken from slots, which the consumer's batches keep; blocks
  /// come back when those die.
  std::shared_ptr<BlockPool> indices_ = std::make_shared<BlockPool>();
  std::size_t next_ = 0;  ///< Round-robin start for fairness between workers' buffers.
  bool shut_down_ = false;
  /// Declared before `readiness_`, whose set holds its descriptor.
  DeathWatchHold death_watch_;
  /// Every worker's channel, pidfd and answer bell, the wake-up, and the death watch.
  ReadinessSet readiness_;
  std::atomic<bool> sends_cancelled_{false};
};

}  // namespace dlreset::data::detail
