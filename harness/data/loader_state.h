// What a DataLoader shares with the iterators it creates.
#pragma once

#include <ATen/core/Generator.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "harness/data/collate.h"
#include "harness/data/core/data_loader_options.h"
#include "harness/data/core/datasets/dataset.h"
#include "harness/data/core/samplers/batch_sampler.h"
#include "harness/data/pass_times.h"

namespace dlreset::data {

/// The counters dlreset's tests and reports read. Every one counts events, never a boolean:
/// the 1.5.0 regression test checked "were the workers shut down?" and that is how the bug
/// shipped.
struct LoaderCounters {
  std::int64_t worker_spawns = 0;      ///< Workers started.
  std::int64_t shutdown_calls = 0;     ///< shutdown_workers() calls, including no-op ones.
  std::int64_t iterator_resets = 0;    ///< Live -> null stores into the persistent iterator field.
  std::int64_t dataset_loads = 0;      ///< Dataset loads, in the main process or any worker.
  std::int64_t iterators_created = 0;  ///< Single- or multi-process iterators built.
};

/// Atomic because worker threads' reports may be counted from any thread.
struct LoaderStats {
  std::atomic<std::int64_t> worker_spawns{0};
  std::atomic<std::int64_t> shutdown_calls{0};
  std::atomic<std::int64_t> iterator_resets{0};
  std::atomic<std::int64_t> dataset_loads{0};
  std::atomic<std::int64_t> iterators_created{0};

  LoaderCounters snapshot() const {
    return {worker_spawns.load(), shutdown_calls.load(), iterator_resets.load(), dataset_loads.load(),
            iterators_created.load()};
  }
};

/// Shared by the loader and its iterators (an iterator may outlive its loader, as in Python).
struct LoaderState {
  DataLoaderOptions options;
  std::shared_ptr<Dataset> dataset;
  /// PyTorch's _index_sampler: its generator advances once per epoch, whichever iterator asks.
  BatchSampler batch_sampler;
  /// SeedMode::torch: the DataLoader's `generator`, which the shuffle and every new iterator's
  /// base seed draw from. Undefined in SeedMode::stable.
  at::Generator generator;
  LoaderStats stats;
  /// Every pass of the loader, in the order their iter() came, each filled by the iterator that
  /// served it while it runs (BaseDataLoaderIter::begin_pass). Not atomic: only the thread
  /// that iterates the loader touches it, as only that thread calls iter() and next().
  std::vector<PassTimes> passes;
  /// DataLoader::set_pin_memory_function's; empty: pin with LibTorch where CUDA is present.
  PinMemoryFunction pin_memory_fn;

  LoaderState(DataLoaderOptions opts, std::shared_ptr<Dataset> data, BatchSampler sampler,
              at::Generator torch_generator)
      : options(std::move(opts)),
        dataset(std::move(data)),
        batch_sampler(std::move(sampler)),
        generator(std::move(torch_generator)) {}
};

}  // namespace dlreset::data
