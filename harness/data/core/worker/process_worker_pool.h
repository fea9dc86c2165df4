// The process back-ends (fork and spawn): one child process and one socket per worker.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/data/core/memory/block_pool.h"
#include "harness/data/core/worker/readiness_set.h"
#include "harness/data/core/worker/transport/message_order.h"
#include "harness/data/core/worker/transport/shared_slots.h"
#include "harness/data/core/worker/transport/socket_channel.h"
#include "harness/data/core/worker/worker_death_watch.h"
#include "harness/data/core/worker/worker_pool.h"
#include "harness/data/core/worker/worker_process.h"

namespace dlreset::trace {
enum class EventKind;  // harness/trace/event_log.h, which the users of this header need not see.
}  // namespace dlreset::trace

namespace dlreset::data::detail {

/// Each worker collates its batches into its own shared-memory slots (shared_slots.h); a task
/// that has a slot goes to it, and its batch comes back, as a descriptor on a ring in that
/// shared memory (descriptor_ring.h), with no system call unless the other side sleeps. A
/// batch travels in its message only when no slot is free (the consumer holds them all) or
/// none fits it; resume, exit and the workers' reports go over the socket, and every message
/// carries its place in one order per direction, so the two ways never reorder it. The parent
/// waits for batches on every worker's socket, answer bell and pidfd with one epoll_wait(). A worker
/// that dies is seen at once, by its pidfd, even when a process it started still holds its
/// socket open; without pidfds (before Linux 5.3, or under valgrind), by its socket's end of
/// file. It is reaped with waitpid and reported with its signal. Its workers are also on the
/// process's WorkerDeathWatch from their start until it shuts them down, so that their death
/// stops whatever loader the main thread reads, and that watch's descriptor is in its wait, so
/// that another loader's dead worker ends a wait for this one's batch.
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

  /// Most bytes of shared-memory slots one worker gets: fewer slots for large batches (a
  /// 60000-sample Fashion-MNIST batch is 189 MB), but always one.
  static constexpr std::size_t kMaxSlotBytesPerWorker = std::size_t{256} << 20;
  TransportStats stats() const override;

 private:
  struct Worker {
    int id = 0;
    WorkerProcess process;
    SocketChannel channel;
    std::shared_ptr<SharedSlots> slots;  ///< Null: every batch travels in its message.
    /// Its channel was closed with a frame half sent (an interrupted send): it cannot be told
    /// to exit, so shutdown kills it without a grace period.
    bool cut_off = false;
    /// The message being sent over the socket, with its place in order and its slot filled
    /// in: a copy kept from message to message, so that copying the next one into it reuses
    /// its buffers instead of allocating.
    Message outgoing;
    DescriptorRing tasks;    ///< Invalid without slots.
    DescriptorRing answers;  ///< Invalid without slots.
    MessageOrder order;      ///< The places of its messages, each way.
    /// Off the socket, but with a message before it still on the answer ring.
    std::optional<Message> held;
  };

  /// Pops the next data message of `worker` that has arrived, in the order it was sent, from
  /// its socket's buffer or its answer ring, handing lifecycle reports on, with its batch taken
  /// from its slot (or the slot freed, for an error or a batch that came inline).
  std::optional<Message> pop_data(Worker& worker);
  /// The next message of `worker`, of either way, if it is due and has arrived.
  std::optional<Message> pop_in_order(Worker& worker);
  /// The front of `worker`'s answer ring, or null when it has none.
  static const SlotDescriptor* front_answer(const Worker& worker);
  /// Sends a message that is not a task with a slot over the socket, in its place in order;
  /// an exit request closes the task ring first, so the worker skips what is queued there.
  bool send_in_order(Worker& worker, const Message& message, Clock::time_point deadline);
  /// WorkerProcess::reap, with the pidfd taken out of the wait set and the exit recorded.
  void reap(Worker& worker, std::chrono::milliseconds timeout, bool kill_after);
  [[noreturn]] void fail_dead(Worker& worker);
  /// True once the worker is gone: its pidfd fired or its socket reached end of file.
  static bool gone(const Worker& worker) { return worker.process.exited() || worker.channel.at_eof(); }
  /// One wait of send() or shutdown(): polls the open channels (with `skip_at_eof`, only those
  /// whose worker has neither closed its end nor exited), the pidfds of the workers not known
  /// to have exited and, given `room_for`, that worker's channel for room to send, for up to
  /// `timeout_ms`, and reads what came.
  struct ChannelWait {
    std::size_t channels = 0;  ///< How many channels were waited on; 0: none was open.
    int ready = 0;             ///< poll's or epoll_wait's result: how many were ready, 0 on a timeout, -1.
    int error = 0;             ///< errno when `ready` is -1.
    bool room = false;         ///< `room_for`'s channel can take more bytes.
    bool woken = false;        ///< wake() was called (wait_for_answers() only).
    bool deaths = false;       ///< The death watch's descriptor was ready (wait_for_answers() only).
  };
  ChannelWait wait_for_channels(int timeout_ms, bool skip_at_eof, const Worker* room_for = nullptr);
  /// receive()'s wait: tells the answer rings it sleeps, then waits up to `timeout_ms` in one
  /// epoll_wait on every channel, pidfd and answer bell and the wake-up descriptor, and reads
  /// what came.
  ChannelWait wait_for_answers(int timeout_ms);
  /// Marks `worker` exited (its pidfd fired) and reads what it sent before it died.
  void note_exit(Worker& worker);
  /// Whose a descriptor in a wait is: wait_for_channels()' poll set names them as the epoll set does.
  using PollOwner = ReadinessSet::Ready;
  using Kind = ReadinessSet::Kind;
  /// Sends to `worker`, reading every channel while its socket is full: a worker blocked
  /// sending a batch reads no message, so a main process that only waited would deadlock with
  /// it once a task is larger than the socket's buffer. Gives the message up when the worker
  /// dies, or at `deadline`. With no deadline, an interrupt request ends the wait too: the
  /// frame is then half sent, so the channel is closed and InterruptedError thrown.
  bool send_reading(Worker& worker, const Message& message, Clock::time_point deadline);
  /// "worker 1 (pid 812) of loader 'train'", for errors.
  std::string name_of(const Worker& worker) const;
  /// Tells the lifecycle handler that `worker` was launched, as its first report.
  void report_spawn(const Worker& worker) const;
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
  std::int64_t batches_in_slots_ = 0;
  std::int64_t batches_without_a_slot_ = 0;
  /// wait_for_channels' poll set and whose each entry is, kept between calls: it runs at every
  /// wait for room to send, and would otherwise allocate at each.
  std::vector<pollfd> poll_entries_;
  std::vector<PollOwner> poll_owners_;
  /// Declared before `readiness_`, whose set holds its descriptor.
  DeathWatchHold death_watch_;
  /// wait_for_answers()'s set: every worker's channel, pidfd and answer bell, the wake-up, and
  /// the death watch.
  ReadinessSet readiness_;
  std::atomic<bool> sends_cancelled_{false};
};

}  // namespace dlreset::data::detail
