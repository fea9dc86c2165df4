// Mirrors _BaseDataLoaderIter of torch/utils/data/dataloader.py @ v1.13.1.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "harness/data/batch_iterator.h"
#include "harness/data/collate.h"
#include "harness/data/core/memory/raw_batch.h"
#include "harness/data/loader_state.h"
#include "harness/data/pass_times.h"

namespace dlreset::data {

/// What both iterators share: the epoch's index order and the count of batches handed out.
/// Subclasses finish their constructor with `reset(true)`, as PyTorch's call
/// `self._reset(loader, first_iter=True)` at the end of `__init__`.
class BaseDataLoaderIter : public BatchIterator {
 public:
  explicit BaseDataLoaderIter(std::shared_ptr<LoaderState> state);

  /// `__next__`: the next batch as tensors (pinned, where the loader pins), or nullopt at the
  /// end of the epoch.
  std::optional<Batch> next() override;
  /// `__next__` without building tensors: what tests that must not run LibTorch ops use. An
  /// iterator whose pin-memory thread pins its batches has none to give and throws.
  std::optional<RawBatch> next_raw();
  /// `_reset(loader, first_iter)`: a new epoch. A persistent iterator is reset by
  /// `DataLoader::iter()` at the start of every epoch after the first.
  virtual void reset(bool first_iter);
  /// Starts accounting a pass (pass_times.h): DataLoader::iter() calls it when it hands
  /// this iterator out, with the time it was itself called and whether it started workers. The
  /// pass goes into the loader's record (LoaderState::passes) at once and grows with every
  /// next(); an iterator no DataLoader handed out accounts nothing.
  void begin_pass(double iter_called_s, PassStart start);
  /// The current pass's times so far; zeros before begin_pass().
  PassTimes pass_times() const;

  std::int64_t num_yielded() const { return num_yielded_; }
  /// `_base_seed`: worker i's seed is base_seed + i. SeedMode::torch draws it from the loader's
  /// generator when the iterator is made, as torch does; SeedMode::stable derives it from the
  /// loader's seed alone, the same for every iterator.
  std::uint64_t base_seed() const { return base_seed_; }
  const std::string& loader_name() const { return state_->options.name; }

 protected:
  /// `_next_data`
  virtual std::optional<RawBatch> next_data() = 0;
  /// `_next_data` with the batch made into tensors: collated, and pinned where the loader
  /// pins (`_utils.pin_memory.pin_memory`, on this thread). An iterator with a pin-memory
  /// thread hands out what that thread pinned instead.
  virtual std::optional<Batch> next_batch();
  /// The worker pool whose dead workers this iterator's own pool reports (with what they sent
  /// before they died): the process's death watch raises only other loaders' deaths at its
  /// batch requests. Null: it has none.
  virtual const void* own_worker_pool() const { return nullptr; }
  /// What next() and next_raw() check before every batch: a pending interrupt, and a dead
  /// worker of another loader.
  void throw_if_stopped() const;
  /// How batches are pinned; empty where they are not (collate.h).
  const PinMemoryFunction& pin_memory() const { return pin_memory_; }
  /// `_next_index`: the next batch of indices of this epoch, into `indices`, whose buffer (or
  /// its pool) is reused; false at the end of the epoch.
  bool next_index(IndexBuffer& indices) { return sampler_iter_.next(indices); }

  std::shared_ptr<LoaderState> state_;

 private:
  /// `__next__` around `fetch` (next_data or next_batch): the checks before every batch, the
  /// count of batches handed out and the pass's times, the same whichever kind of batch it
  /// fetches.
  template <typename Fetched>
  std::optional<Fetched> next_counted(std::optional<Fetched> (BaseDataLoaderIter::*fetch)());
  /// Adds one next() call, made at `called_s`, to the current pass; `batch`: it returned one.
  void account_next(double called_s, bool batch);

  BatchSampler::Iterator sampler_iter_;
  std::uint64_t base_seed_ = 0;
  /// The current pass's place in state_->passes; -1: none is accounted.
  std::int64_t pass_index_ = -1;
  /// When next() last returned a batch of the current pass; negative after the end, when no
  /// step is open.
  double last_return_s_ = -1.0;
  std::int64_t num_yielded_ = 0;
  PinMemoryFunction pin_memory_;
};

/// Counts a worker's launch and logs it: the one place either happens, so the loader's count
/// and the event log cannot disagree.
void note_worker_spawn(LoaderState& state, int worker_id, std::int64_t pid, double time_s);
/// Counts a dataset load and logs it (from the main process or a worker's report).
void note_dataset_load(LoaderState& state, int worker_id, std::int64_t pid, double time_s, double duration_s);

}  // namespace dlreset::data
