// The parent's side of a set of workers: start, talk to, shut down.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "harness/data/core/data_loader_options.h"
#include "harness/data/core/worker/transport/protocol.h"
#include "harness/data/core/worker/transport/transport_stats.h"
#include "harness/data/core/worker/worker_loop.h"

namespace dlreset::data::detail {

/// Everything one worker needs to start.
struct WorkerLaunch {
  WorkerConfig config;
  /// The worker's own copy of the dataset. Thread and fork workers use it as is; a spawned
  /// worker is sent its spec() and rebuilds it.
  std::shared_ptr<Dataset> dataset;
  /// Process workers only: the most samples a task asks for (the batch size), and how many
  /// batches may be in flight or in use at once, which size the worker's shared-memory slots
  /// (worker/transport/shared_slots.h). 0: no slots; every batch travels in its message.
  std::int64_t batch_samples = 0;
  int slot_count = 0;
};

/// Receives the workers' lifecycle reports (started, dataset_loaded, exiting) on the parent's
/// thread, as they arrive, so that loads are counted even for batches nobody reads.
using LifecycleHandler = std::function<void(const Message&)>;

/// The `spawned` report a pool hands its lifecycle handler when it has launched a worker.
Message spawned_report(int worker_id, std::int64_t pid);

/// A pool's destructor calls its shutdown through this. An exception out of a destructor would
/// end the program, so what the shutdown could not do is said on stderr instead; `workers`
/// names them in that sentence ("worker processes", "worker threads").
void shutdown_in_destructor(const char* workers, const std::function<void()>& shutdown) noexcept;

/// PyTorch's index queues, result queue and worker handles behind one interface; one
/// implementation a back-end (thread_worker_pool.cpp, process_worker_pool.cpp).
class WorkerPool {
 public:
  WorkerPool() = default;
  virtual ~WorkerPool() = default;
  /// A pool owns its workers: a copy would be a second owner of the same threads or processes.
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Queues a message for one worker. A message to a worker that is gone is dropped: the next
  /// receive() reports the death, as PyTorch's put() into a dead worker's queue succeeds and
  /// its _get_data reports the death.
  virtual void send(int worker_id, const Message& message) = 0;
  /// The next batch, error or resume_ack from any worker; nullopt once `timeout` has passed,
  /// or sooner when a worker of another loader has died, which the caller raises
  /// (throw_if_a_worker_died in worker_death_watch.h). Lifecycle reports go to the handler on the
  /// way. Throws WorkerDiedError when one of its own workers dies.
  virtual std::optional<Message> receive(std::chrono::milliseconds timeout) = 0;
  /// PyTorch's _shutdown_workers, minus the bookkeeping: tells every worker to exit, keeps
  /// reading what they still send (their lifecycle reports count), waits up to `grace` for
  /// them to finish, then kills (processes) or abandons (threads) the stragglers. Idempotent.
  virtual void shutdown(std::chrono::milliseconds grace) = 0;
  /// Process ids of the workers (the parent's own pid for thread workers).
  virtual std::vector<std::int64_t> pids() const = 0;
  /// Thread-safe: a receive() waiting on another thread returns nullopt soon, whatever its
  /// timeout. The pin-memory thread (pin_memory_thread.h) waits in receive() and sends the
  /// main thread's messages for it; this is how it hears that there is one to send.
  virtual void wake() = 0;
  /// Thread-safe: a send() waiting for room on another thread gives up, as at an interrupt,
  /// and so does any later one that would wait (shutdown's messages excepted): stopping the
  /// pin-memory thread must not wait on a worker that reads nothing.
  virtual void cancel_sends() {}
  /// How the batches travelled so far (transport/transport_stats.h).
  virtual TransportStats stats() const = 0;
};

/// Starts one worker per launch with the given back-end.
std::unique_ptr<WorkerPool> start_worker_pool(StartMethod method, std::vector<WorkerLaunch> launches,
                                              LifecycleHandler on_lifecycle);

}  // namespace dlreset::data::detail
