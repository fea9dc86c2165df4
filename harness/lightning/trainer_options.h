// Mirrors the Trainer arguments of pytorch_lightning/trainer/trainer.py @ 1.5.0 that matter here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "harness/lightning/callback.h"
#include "harness/lightning/fetching.h"
#include "harness/profiler/profiler.h"

namespace dlreset::lightning {

/// The DDP strategy's `distributed_sampler_kwargs` (num_replicas is the world size, rank the
/// global rank), and the seed `_get_distributed_sampler` reads from PL_GLOBAL_SEED.
struct DistributedSamplerKwargs {
  std::int64_t num_replicas = 1;
  std::int64_t rank = 0;
  std::uint64_t seed = 0;
};

/// Lightning's defaults, except that limits are batch counts (-1: all) rather than fractions.
struct TrainerOptions {
  int max_epochs = 1000;
  std::int64_t limit_train_batches = -1;
  std::int64_t limit_val_batches = -1;
  /// Validation batches run before training starts; -1 runs the whole validation set.
  int num_sanity_val_steps = 2;
  /// Which Lightning release's DataFetcher to use: the seam between buggy and fixed.
  DataFetcherFactory data_fetcher;
  /// Null: Lightning's PassThroughProfiler.
  profiler::Profiler* profiler = nullptr;
  std::vector<Callback*> callbacks;
  /// Set under a distributed strategy (one rank of a DDP job): with `replace_sampler_ddp`, the
  /// loaders are re-made with this rank's DistributedSampler (data_loading.h). Null: one process.
  std::optional<DistributedSamplerKwargs> distributed;
  bool replace_sampler_ddp = true;
  /// The strategy's `reduce(value, reduce_op="mean")` (DDPPlugin's on a rank of a multi-rank
  /// job): what a metric logged with sync_dist=True goes through at the end of its epoch. It is
  /// a collective, so every rank calls it the same number of times. Empty: one process.
  std::function<double(double)> reduce_mean;
};

/// The batches a loader gives an epoch under `limit` (-1: all `available`): how the Trainer and
/// the vanilla loop both count them.
inline std::int64_t limited(std::int64_t available, std::int64_t limit) {
  return limit < 0 ? available : std::min(available, limit);
}

/// Calls `hook` on every callback of `options`, in order: Lightning's `call_hook` for the
/// callbacks, shared by the Trainer and the vanilla loop.
template <typename Hook>
void call_callbacks(const TrainerOptions& options, Hook&& hook) {
  for (Callback* callback : options.callbacks) hook(*callback);
}

}  // namespace dlreset::lightning
