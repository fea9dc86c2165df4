// Mirrors _MultiProcessingDataLoaderIter of torch/utils/data/dataloader.py @ v1.13.1.
#include "harness/data/multi_processing_dataloader_iter.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "harness/data/core/errors.h"
#include "harness/data/core/worker/status_check.h"
#include "harness/data/core/worker/worker_death_watch.h"
#include "harness/trace/event_log.h"

namespace dlreset::data {

namespace {

void on_worker_lifecycle(LoaderState& state, const detail::Message& message) {
  if (message.type == detail::MessageType::spawned) {
    note_worker_spawn(state, message.worker_id, message.pid, message.time_s);
  } else if (message.type == detail::MessageType::dataset_loaded) {
    note_dataset_load(state, message.worker_id, message.pid, message.time_s, message.duration_s);
  } else if (message.type == detail::MessageType::started) {
    trace::EventLog::global().record(trace::worker_event(trace::EventKind::worker_started, state.options.name,
                                                         message.worker_id, message.pid, message.time_s));
  }
}

/// Batches of one worker that its consumer may hold beside the prefetch_factor in flight: the
/// one a training step uses and the one a fetcher prefetched. They size its shared-memory slots
/// (harness/data/core/worker/transport/shared_slots.h); a batch that finds them all held travels in its message
/// instead.
constexpr int kBatchesHeldByConsumer = 2;

}  // namespace

MultiProcessingDataLoaderIter::MultiProcessingDataLoaderIter(std::shared_ptr<LoaderState> state)
    : BaseDataLoaderIter(std::move(state)),
      num_workers_(state_->options.num_workers),
      prefetch_factor_(state_->options.prefetch_factor),
      persistent_workers_(state_->options.persistent_workers),
      timeout_s_(state_->options.timeout_s),
      held_results_(static_cast<std::size_t>(prefetch_factor_ * num_workers_)) {
  const DataLoaderOptions& options = state_->options;
  std::vector<detail::WorkerLaunch> launches;
  for (int id = 0; id < num_workers_; ++id) {
    detail::WorkerLaunch launch;
    launch.config.worker_id = id;
    launch.config.num_workers = num_workers_;
    launch.config.seed = base_seed() + static_cast<std::uint64_t>(id);
    launch.config.loader = options.name;
    launch.config.worker_init_fn = options.worker_init_fn;
    launch.dataset = std::shared_ptr<Dataset>(state_->dataset->clone());
    launch.batch_samples = options.batch_size;
    launch.slot_count = options.shared_memory ? prefetch_factor_ + kBatchesHeldByConsumer : 0;
    launches.push_back(std::move(launch));
  }
  // The handler holds the state, not `this`: a report may arrive while this object is being
  // destroyed (shutdown drains the sockets from the destructor).
  pool_ = detail::start_worker_pool(options.start_method, std::move(launches),
                                    [state = state_](const detail::Message& message) {
                                      on_worker_lifecycle(*state, message);
                                    });
  if (pin_memory()) {
    pin_memory_thread_ = std::make_unique<detail::PinMemoryThread>(*pool_, pin_memory(), options.name);
  }
  // Torch's __init__ ends with its own _reset(loader, first_iter=True): this class's, named so,
  // since no override exists while it is being built.
  MultiProcessingDataLoaderIter::reset(/*first_iter=*/true);
}

MultiProcessingDataLoaderIter::~MultiProcessingDataLoaderIter() { shutdown_workers(); }

detail::IteratorStats MultiProcessingDataLoaderIter::stats() const {
  detail::IteratorStats stats;
  stats.tasks_outstanding = tasks_outstanding_;
  stats.index_batches_pending = send_idx_ - rcvd_idx_;
  stats.results_held_for_their_turn = results_held_for_their_turn_;
  if (pool_) stats.transport = pool_->stats();
  stats.pass = pass_times();
  return stats;
}

std::vector<std::int64_t> MultiProcessingDataLoaderIter::worker_pids() const {
  return pool_ ? pool_->pids() : std::vector<std::int64_t>{};
}

void MultiProcessingDataLoaderIter::reset(bool first_iter) {
  if (shutdown_) {
    throw DataLoaderError("The iterator of loader '" + state_->options.name +
                          "' cannot start a new epoch: its workers were shut down. Ask the "
                          "DataLoader for a new iterator.");
  }
  BaseDataLoaderIter::reset(first_iter);
  send_idx_ = 0;
  rcvd_idx_ = 0;
  held_results_.clear();
  tasks_outstanding_ = 0;
  worker_queue_idx_ = 0;
  if (!first_iter) {
    detail::Message resume;
    resume.type = detail::MessageType::resume;
    for (int id = 0; id < num_workers_; ++id) put(id, resume);
    int acks_missing = num_workers_;
    while (acks_missing > 0) {
      const detail::WorkerResult result = get_data();
      // Anything else is a result of the previous epoch still on its way: dropped.
      if (result.message.type == detail::MessageType::resume_ack) --acks_missing;
    }
  }
  for (int i = 0; i < prefetch_factor_ * num_workers_; ++i) try_put_index();
}

void MultiProcessingDataLoaderIter::try_put_index() {
  if (!next_index(task_.indices)) return;
  if (tasks_outstanding_ >= prefetch_factor_ * num_workers_) {
    throw std::logic_error("DataLoader iterator of loader '" + state_->options.name + "' would have " +
                           std::to_string(tasks_outstanding_ + 1) + " index batches in flight, more than " +
                           "prefetch_factor x num_workers = " + std::to_string(prefetch_factor_ * num_workers_) +
                           ": a bug in dlreset's iterator.");
  }
  const int worker_id = worker_queue_idx_;
  worker_queue_idx_ = (worker_queue_idx_ + 1) % num_workers_;
  task_.type = detail::MessageType::task;
  task_.worker_id = worker_id;
  task_.send_idx = send_idx_;
  put(worker_id, task_);
  ++tasks_outstanding_;
  ++send_idx_;
}

void MultiProcessingDataLoaderIter::put(int worker_id, const detail::Message& message) {
  if (pin_memory_thread_) {
    pin_memory_thread_->send(worker_id, message);
  } else {
    pool_->send(worker_id, message);
  }
}

detail::WorkerResult MultiProcessingDataLoaderIter::get_data() {
  const auto try_get_data = [this](std::chrono::milliseconds timeout) -> std::optional<detail::WorkerResult> {
    if (pin_memory_thread_) return pin_memory_thread_->get(timeout);
    std::optional<detail::Message> message = pool_->receive(timeout);
    if (!message) return std::nullopt;
    detail::WorkerResult result;
    result.message = std::move(*message);
    return result;
  };
  using Clock = std::chrono::steady_clock;
  const bool timed = timeout_s_ > 0;
  const auto timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s_ * 1000.0));
  const auto deadline = timed ? Clock::now() + timeout : Clock::time_point::max();
  while (true) {
    // The pool notices its own dead worker at once (its pidfd fires); the interval only bounds
    // how long one wait lasts.
    const auto wait = timed ? std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now())
                            : detail::kStatusCheckInterval;
    if (std::optional<detail::WorkerResult> result = try_get_data(std::max(wait, std::chrono::milliseconds(0)))) {
      return std::move(*result);
    }
    // A wait also ends early when a worker of another loader died: that is raised here.
    detail::throw_if_a_worker_died(own_worker_pool());
    if (timed && Clock::now() >= deadline) throw DataLoaderTimeoutError(timeout_s_);
  }
}

std::optional<RawBatch> MultiProcessingDataLoaderIter::next_data() {
  if (pin_memory_thread_) {
    throw DataLoaderError("The iterator of loader '" + state_->options.name +
                          "' pins its batches in its pin-memory thread, so it has only tensors to "
                          "give: call next(), not next_raw(), or turn pin_memory off.");
  }
  std::optional<detail::WorkerResult> result = next_result();
  if (!result) return std::nullopt;
  return std::move(result->message.batch);
}

std::optional<Batch> MultiProcessingDataLoaderIter::next_batch() {
  if (!pin_memory_thread_) return BaseDataLoaderIter::next_batch();
  std::optional<detail::WorkerResult> result = next_result();
  if (!result) return std::nullopt;
  return std::move(*result->batch);
}

std::optional<detail::WorkerResult> MultiProcessingDataLoaderIter::next_result() {
  while (true) {
    if (rcvd_idx_ >= send_idx_) {
      // The epoch is over. A non-persistent iterator is done for good; asked again, it says
      // so again (and calls _shutdown_workers again), as torch's does.
      if (!persistent_workers_) shutdown_workers();
      return std::nullopt;
    }
    if (shutdown_) {
      // Torch fails an assertion here; a sentence says more.
      throw DataLoaderError("The iterator of loader '" + state_->options.name +
                            "' was asked for a batch after its workers were shut down. Ask the "
                            "DataLoader for a new iterator.");
    }
    if (std::optional<detail::WorkerResult> held = held_results_.take(rcvd_idx_)) return process_data(std::move(*held));
    detail::WorkerResult result = get_data();
    const detail::MessageType type = result.message.type;
    if (type != detail::MessageType::batch && type != detail::MessageType::error) continue;
    --tasks_outstanding_;
    if (result.message.send_idx != rcvd_idx_) {
      const std::int64_t send_idx = result.message.send_idx;
      // No task of this epoch has that index: nobody will ask for it.
      if (send_idx < rcvd_idx_ || send_idx >= send_idx_) continue;
      // Came back early: keep it until its turn.
      ++results_held_for_their_turn_;
      held_results_.put(send_idx, std::move(result));
      continue;
    }
    return process_data(std::move(result));
  }
}

detail::WorkerResult MultiProcessingDataLoaderIter::process_data(detail::WorkerResult result) {
  ++rcvd_idx_;
  try_put_index();
  const detail::Message& message = result.message;
  if (message.type == detail::MessageType::error) {
    throw WorkerError(state_->options.name, message.worker_id, message.pid, message.error_type, message.text);
  }
  if (!result.pin_error.empty()) throw DataLoaderError(result.pin_error);
  return result;
}

void MultiProcessingDataLoaderIter::shutdown_workers() {
  state_->stats.shutdown_calls.fetch_add(1);
  if (shutdown_) return;
  shutdown_ = true;
  // The pin-memory thread first, as PyTorch: the pool is the main thread's again once it has
  // been joined, and only then are the workers told to exit.
  if (pin_memory_thread_) pin_memory_thread_->stop();
  if (pool_) pool_->shutdown(detail::kStatusCheckInterval);
}

}  // namespace dlreset::data
