#include "harness/data/core/worker/thread_worker_pool.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <mutex>
#include <optional>
#include <utility>

#include "harness/data/core/datasets/dataset.h"
#include "harness/data/core/interrupt.h"
#include "harness/data/core/memory/block_pool.h"
#include "harness/data/core/worker/blocking_queue.h"
#include "harness/data/core/worker/status_check.h"
#include "harness/data/core/worker/worker_death_watch.h"
#include "harness/trace/event_log.h"

namespace dlreset::data::detail {

struct ThreadWorkerPool::Shared {
  detail::BlockingQueue<Message> results;  ///< PyTorch's worker_result_queue.
};

struct ThreadWorkerPool::WorkerState {
  detail::BlockingQueue<Message> inbox;  ///< PyTorch's index_queue for this worker.
  /// Its batches' feature and label blocks, handed back when the consumer's tensors die.
  std::shared_ptr<BlockPool> features = std::make_shared<BlockPool>();
  std::shared_ptr<BlockPool> labels = std::make_shared<BlockPool>();
  /// Its tasks' index lists, which their batches keep.
  std::shared_ptr<BlockPool> indices = std::make_shared<BlockPool>();
  std::mutex mutex;
  std::condition_variable exit_signal;
  bool exit_requested = false;  ///< PyTorch's done_event, per worker.
};

namespace {

class ThreadEndpoint : public WorkerEndpoint {
 public:
  ThreadEndpoint(std::shared_ptr<ThreadWorkerPool::WorkerState> state, std::shared_ptr<ThreadWorkerPool::Shared> shared)
      : state_(std::move(state)), shared_(std::move(shared)) {}

  Message receive() override { return state_->inbox.pop(); }

  bool exit_requested() override {
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->exit_requested;
  }

  bool send(Message message) override {
    shared_->results.push(std::move(message));
    return true;
  }

  void wait_until_exit_requested() override {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->exit_signal.wait(lock, [this] { return state_->exit_requested; });
  }

  BatchBlocks fetch_blocks() override { return {state_->features, state_->labels}; }

 private:
  std::shared_ptr<ThreadWorkerPool::WorkerState> state_;
  std::shared_ptr<ThreadWorkerPool::Shared> shared_;
};

void record(trace::EventKind kind, const std::string& loader, int worker_id) {
  trace::EventLog::global().record(trace::worker_event(kind, loader, worker_id, ::getpid(), trace::monotonic_now_s()));
}

}  // namespace

ThreadWorkerPool::ThreadWorkerPool(std::vector<WorkerLaunch> launches, LifecycleHandler on_lifecycle)
    : on_lifecycle_(std::move(on_lifecycle)), shared_(std::make_shared<Shared>()) {
  if (!launches.empty()) loader_ = launches.front().config.loader;
  for (auto& launch : launches) {
    auto state = std::make_shared<WorkerState>();
    workers_.push_back(state);
    exited_.push_back(false);
    if (on_lifecycle_) on_lifecycle_(spawned_report(launch.config.worker_id, ::getpid()));
    threads_.emplace_back([state, shared = shared_, dataset = std::move(launch.dataset),
                           config = std::move(launch.config)]() mutable {
      config.in_own_process = false;
      ThreadEndpoint endpoint(state, shared);
      worker_loop(endpoint, *dataset, config);
    });
  }
}

ThreadWorkerPool::~ThreadWorkerPool() {
  shutdown_in_destructor("worker threads", [this] { ThreadWorkerPool::shutdown(kStatusCheckInterval); });
}

TransportStats ThreadWorkerPool::stats() const {
  TransportStats stats;
  for (const auto& worker : workers_) stats.feature_blocks_allocated += worker->features->fresh_allocations();
  return stats;
}

void ThreadWorkerPool::send(int worker_id, const Message& message) {
  WorkerState& worker = *workers_.at(static_cast<std::size_t>(worker_id));
  // The copy's index list draws on the worker's pool: a buffer copied into keeps its own
  // source (raw_batch.h), so the task, and then the batch that keeps its indices, take a
  // block the consumer's last batches gave back instead of a new one.
  Message task;
  task.indices = IndexBuffer(IndexBuffer::allocator_type(worker.indices));
  task = message;
  worker.inbox.push(std::move(task));
}

bool ThreadWorkerPool::consume_lifecycle(const Message& message) {
  if (!is_lifecycle(message.type)) return false;
  if (message.type == MessageType::exiting && message.worker_id >= 0 &&
      message.worker_id < static_cast<int>(workers_.size())) {
    exited_[static_cast<std::size_t>(message.worker_id)] = true;
  }
  if (on_lifecycle_) on_lifecycle_(message);
  return true;
}

std::optional<Message> ThreadWorkerPool::receive(std::chrono::milliseconds timeout) {
  using Duration = std::chrono::steady_clock::duration;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    throw_if_interrupted();
    const Duration left = std::max(deadline - std::chrono::steady_clock::now(), Duration::zero());
    const Duration slice = std::min<Duration>(left, kInterruptCheckInterval);
    bool woken = false;
    std::optional<Message> message = shared_->results.pop_for(slice, &woken);
    if (!message) {
      if (woken || slice == left) return std::nullopt;
      // A process worker of another loader died: the caller raises it (this may be the
      // pin-memory thread, which must not end for it).
      if (WorkerDeathWatch::global().has_news(static_cast<const WorkerPool*>(this))) return std::nullopt;
      continue;
    }
    if (!consume_lifecycle(*message)) return message;
  }
}

void ThreadWorkerPool::wake() { shared_->results.wake(); }

void ThreadWorkerPool::shutdown(std::chrono::milliseconds grace) {
  if (shut_down_) return;
  shut_down_ = true;
  for (std::size_t id = 0; id < workers_.size(); ++id) {
    record(trace::EventKind::worker_shutdown, loader_, static_cast<int>(id));
    {
      std::lock_guard<std::mutex> lock(workers_[id]->mutex);
      workers_[id]->exit_requested = true;
    }
    workers_[id]->exit_signal.notify_all();
    Message exit;
    exit.type = MessageType::exit;
    workers_[id]->inbox.push(exit);
  }
  // Keep reading until every worker has said it is exiting: their load reports still count.
  const auto deadline = std::chrono::steady_clock::now() + grace;
  auto all_exited = [this] {
    for (const bool exited : exited_) {
      if (!exited) return false;
    }
    return true;
  };
  while (!all_exited()) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= decltype(left)::zero()) break;
    if (std::optional<Message> message = shared_->results.pop_for(left)) {
      consume_lifecycle(*message);
    }
  }
  for (std::size_t id = 0; id < threads_.size(); ++id) {
    if (exited_[id]) {
      threads_[id].join();
      record(trace::EventKind::worker_exit, loader_, static_cast<int>(id));
    } else {
      std::cerr << "dlreset: DataLoader worker thread " << id << " of loader '" << loader_ << "' did not exit within "
                << grace.count() << " ms of being told to; abandoning it (threads cannot be killed).\n";
      threads_[id].detach();
    }
  }
}

std::vector<std::int64_t> ThreadWorkerPool::pids() const {
  return std::vector<std::int64_t>(workers_.size(), ::getpid());
}

}  // namespace dlreset::data::detail
