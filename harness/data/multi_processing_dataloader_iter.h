// Mirrors _MultiProcessingDataLoaderIter of torch/utils/data/dataloader.py @ v1.13.1.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "harness/data/base_dataloader_iter.h"
#include "harness/data/core/worker/transport/ordered_buffer.h"
#include "harness/data/core/worker/worker_pool.h"
#include "harness/data/iterator_stats.h"
#include "harness/data/pin_memory_thread.h"

namespace dlreset::data {

/// num_workers > 0. Starts its workers in the constructor (each loads its own dataset copy on
/// its first task), keeps prefetch_factor × num_workers index batches in flight, sends them
/// round-robin, and hands batches out in the order they were sent whatever order they come
/// back in. With persistent workers it survives the epoch and is `reset` for the next one.
/// Where the loader pins (collate.h), a pin-memory thread reads the workers' results and pins
/// them off the training thread, as PyTorch's does; it is stopped first at shutdown.
class MultiProcessingDataLoaderIter : public BaseDataLoaderIter {
 public:
  explicit MultiProcessingDataLoaderIter(std::shared_ptr<LoaderState> state);
  /// PyTorch's `__del__`: shuts the workers down (and counts that call too).
  ~MultiProcessingDataLoaderIter() override;
  /// It owns its workers and their pool: one iterator, one set of workers.
  MultiProcessingDataLoaderIter(const MultiProcessingDataLoaderIter&) = delete;
  MultiProcessingDataLoaderIter& operator=(const MultiProcessingDataLoaderIter&) = delete;

  /// `_reset`: a new epoch. After the first, every worker is sent a resume and the iterator
  /// waits for all acks, dropping results of the previous epoch that were still on the way;
  /// the workers, and their loaded datasets, stay.
  void reset(bool first_iter) override;
  /// `_shutdown_workers`: idempotent; every call is counted, including the ones that find
  /// the workers already gone (Lightning's test_workers_are_shutdown counts them all).
  void shutdown_workers();
  /// Its bookkeeping and its workers' transport, now (iterator_stats.h).
  detail::IteratorStats stats() const;

  /// The pin-memory thread, or null where the loader does not pin: for tests.
  const detail::PinMemoryThread* pin_memory_thread() const { return pin_memory_thread_.get(); }

  bool workers_shut_down() const { return shutdown_; }
  std::vector<std::int64_t> worker_pids() const;

 protected:
  std::optional<RawBatch> next_data() override;
  std::optional<Batch> next_batch() override;
  const void* own_worker_pool() const override { return static_cast<const detail::WorkerPool*>(pool_.get()); }

 private:
  /// `_next_data` up to the result: the next batch's, in order, or nullopt at the end.
  std::optional<detail::WorkerResult> next_result();
  /// `_try_put_index`: send the next index batch, if any, to the next worker in turn.
  void try_put_index();
  /// `index_queue.put`: straight to the pool, or through the pin-memory thread while it runs.
  void put(int worker_id, const detail::Message& message);
  /// `_get_data`: the next result from any worker (through the pin-memory thread, where there
  /// is one), honouring the timeout.
  detail::WorkerResult get_data();
  /// `_process_data`: count it, refill one slot, re-raise a worker's or the pinning's error.
  detail::WorkerResult process_data(detail::WorkerResult result);

  std::unique_ptr<detail::WorkerPool> pool_;
  /// Declared after the pool, so that it is destroyed (stopped and joined) first.
  std::unique_ptr<detail::PinMemoryThread> pin_memory_thread_;
  int num_workers_;
  int prefetch_factor_;
  bool persistent_workers_;
  double timeout_s_;
  std::int64_t send_idx_ = 0;  ///< Next task's index.
  std::int64_t rcvd_idx_ = 0;  ///< Next index to hand out.
  /// What PyTorch keeps in _task_info that dlreset needs: a result that arrived before its
  /// turn, at its send_idx. Index batches pending (send_idx_ - rcvd_idx_) never exceed
  /// prefetch_factor × num_workers, the buffer's capacity, so keeping one allocates nothing.
  /// PyTorch also keeps each task's worker, to skip tasks of a worker it has given up on;
  /// dlreset never gives up on one: a dead worker ends the epoch with an error.
  detail::OrderedBuffer<detail::WorkerResult> held_results_;
  /// The next task, kept so that its indices reuse their buffer from batch to batch.
  detail::Message task_;
  /// `_tasks_outstanding`: index batches sent whose result has not come back. PyTorch asserts
  /// it stays below prefetch_factor × num_workers before each send; so does try_put_index.
  int tasks_outstanding_ = 0;
  std::int64_t results_held_for_their_turn_ = 0;
  int worker_queue_idx_ = 0;
  bool shutdown_ = false;
};

}  // namespace dlreset::data
