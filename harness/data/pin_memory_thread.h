// Mirrors _pin_memory_loop of torch/utils/data/_utils/pin_memory.py @ v1.13.1.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "harness/data/batch.h"
#include "harness/data/collate.h"
#include "harness/data/core/worker/blocking_queue.h"
#include "harness/data/core/worker/transport/protocol.h"

namespace dlreset::data::detail {

class WorkerPool;

/// A worker's answer as the iterator takes it: the message and, for a batch that a pin-memory
/// thread pinned, its tensors. The thread hands them over in the order they came.
struct WorkerResult {
  detail::Message message;     ///< A batch's RawBatch was moved into `batch`.
  std::optional<Batch> batch;  ///< The pinned batch.
  /// The pin function threw (PyTorch's ExceptionWrapper "in pin memory thread for device 0"):
  /// its words, raised in the main thread when this batch's turn comes.
  std::string pin_error;
  /// What ended the thread (a worker's death, a corrupt message), queued behind the results
  /// that came before it.
  std::exception_ptr failure;
};

/// PyTorch's pin-memory thread: it reads the workers' results as they come, pins each batch
/// off the training thread, and queues it for the main thread (`_data_queue`). While it runs
/// it is the only thread that touches the worker pool: the main thread's messages to the
/// workers (tasks, resumes) go through send(), and the thread sends them between two reads,
/// woken by the pool (WorkerPool::wake). So the pool needs no lock, and a batch is pinned as
/// soon as it arrives, whatever the training step is doing.
///
/// stop() is the first step of the iterator's shutdown, as in PyTorch's `_shutdown_workers`:
/// the pool is the main thread's again only once this thread has been joined.
class PinMemoryThread {
 public:
  PinMemoryThread(detail::WorkerPool& pool, PinMemoryFunction pin, std::string loader);
  /// stop().
  ~PinMemoryThread();
  PinMemoryThread(const PinMemoryThread&) = delete;
  PinMemoryThread& operator=(const PinMemoryThread&) = delete;

  /// Queues a message for worker `worker_id`; the thread sends it as soon as it can.
  void send(int worker_id, detail::Message message);
  /// The next result, or nullopt once `timeout` has passed. A pending interrupt throws
  /// InterruptedError within kInterruptCheckInterval. What ended the thread (a worker's death,
  /// a corrupt message) is thrown after the results that came before it, and again at every
  /// later call.
  std::optional<WorkerResult> get(std::chrono::milliseconds timeout);
  /// `_pin_memory_thread_done_event.set()`, then join: the thread drops what it has not
  /// handed over, and gives up a send waiting on a worker that reads nothing. Idempotent.
  void stop();

  /// Batches this thread pinned so far. A test hook.
  std::int64_t batches_pinned() const;
  /// When the thread had stopped (CLOCK_MONOTONIC seconds, as the event log's), or 0 while it
  /// runs: its shutdown comes before the workers'. A test hook.
  double stopped_at_s() const;

 private:
  /// `_pin_memory_loop`: until done, do_one_step().
  void pin_memory_loop();
  /// Sends what the main thread queued, reads one result (or waits one status-check
  /// interval), pins it and queues it for the main thread.
  void do_one_step();
  bool done() const;

  detail::WorkerPool& pool_;
  PinMemoryFunction pin_;
  std::string loader_;
  detail::BlockingQueue<WorkerResult> data_queue_;  ///< PyTorch's `_data_queue`.

  mutable std::mutex mutex_;
  std::condition_variable done_signal_;
  bool done_ = false;  ///< PyTorch's `_pin_memory_thread_done_event`.
  std::deque<std::pair<int, detail::Message>> outbox_;
  std::int64_t batches_pinned_ = 0;
  double stopped_at_s_ = 0.0;
  /// The main thread's copy of what ended the thread, so that every later get() throws it.
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace dlreset::data::detail
