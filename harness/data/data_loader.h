// Mirrors torch.utils.data.DataLoader (torch/utils/data/dataloader.py @ v1.13.1).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/data/base_dataloader_iter.h"
#include "harness/data/batch_iterator.h"
#include "harness/data/core/data_loader_options.h"
#include "harness/data/core/datasets/dataset.h"
#include "harness/data/loader_state.h"
#include "harness/data/reset_observer.h"
#include "harness/trace/watched.h"

namespace dlreset::data {

/// Iterating a DataLoader (`iter()`) gives batches of its dataset. With persistent workers,
/// the first `iter()` builds an iterator and keeps it in `iterator()`; every later `iter()`
/// resets that same iterator, so its workers and their loaded datasets live on. That kept
/// iterator sits in a *watched* field: storing null over it — what Lightning 1.5.0 did at the
/// start of every epoch — is counted, logged and, with tracing on, shown with its stack.
///
/// Neither copyable nor movable: the watched field's hook points at this object.
class DataLoader : public BatchIterable {
 public:
  /// Checks the options as PyTorch does and throws DataLoaderError with a full sentence.
  DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options);
  /// `DataLoader(dataset, sampler=...)`: batches follow `sampler`'s order, a
  /// DistributedSampler's shard for one. `options.shuffle` must be false, as in torch, whose
  /// sampler option is mutually exclusive with shuffle.
  DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options, std::unique_ptr<Sampler> sampler);
  ~DataLoader() override;
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  /// `__iter__`
  std::shared_ptr<BatchIterator> iter() override;
  /// `__len__`: batches in an epoch.
  std::int64_t size() const override { return state_->batch_sampler.size(); }
  /// `sampler`: what a loop calls set_epoch on, for a DistributedSampler.
  Sampler& sampler() { return state_->batch_sampler.sampler(); }

  /// PyTorch's `_iterator`, the field Lightning reaches into. Null until a persistent loader
  /// is first iterated, and whenever someone nulls it.
  trace::Watched<std::shared_ptr<BaseDataLoaderIter>>& iterator() { return iterator_; }

  const DataLoaderOptions& options() const { return state_->options; }
  const std::string& name() const { return state_->options.name; }
  Dataset& dataset() { return *state_->dataset; }
  /// The dataset as the loader holds it, for a loader re-made around it (Lightning's
  /// `_update_dataloader`).
  std::shared_ptr<Dataset> shared_dataset() const { return state_->dataset; }
  LoaderCounters counters() const { return state_->stats.snapshot(); }
  /// Where each pass's time went so far (pass_times.h), in the order of their iter();
  /// read it from the thread that iterates the loader.
  const std::vector<PassTimes>& passes() const { return state_->passes; }

  /// Pins batches with `pin` instead of LibTorch's page-locked copy, and pins whenever
  /// `pin_memory` is set, CUDA or not: PyTorch's `pin_memory_device`, for a program that pins
  /// for a device of its own, and for tests of the pin-memory thread on a machine without a
  /// GPU. Iterators made before the call keep the old way.
  void set_pin_memory_function(PinMemoryFunction pin) { state_->pin_memory_fn = std::move(pin); }
  /// What set_pin_memory_function() gave; empty if nothing.
  const PinMemoryFunction& custom_pin_memory() const { return state_->pin_memory_fn; }

  /// Tells `observer` of every later reset of iterator(), with its stack, until removed. Call
  /// both from the thread that iterates the loader, the one whose stores reach the field.
  void add_reset_observer(ResetObserver* observer);
  void remove_reset_observer(ResetObserver* observer);

 private:
  /// `_get_iterator`: a single-process iterator for 0 workers, a multi-process one otherwise.
  std::shared_ptr<BaseDataLoaderIter> get_iterator();
  /// The watched field's hook: counts the reset and logs it (with its stack when tracing).
  __attribute__((noinline)) static void on_iterator_nulled(void* context);

  std::shared_ptr<LoaderState> state_;
  trace::Watched<std::shared_ptr<BaseDataLoaderIter>> iterator_;
  /// Not owned; a stack is captured at every reset only while one is here.
  std::vector<ResetObserver*> reset_observers_;
};

}  // namespace dlreset::data
