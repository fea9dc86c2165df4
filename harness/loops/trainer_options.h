// Mirrors the Trainer arguments of pytorch_lightning/trainer/trainer.py @ 1.5.0 that matter here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "harness/loops/callback.h"
#include "harness/loops/fetching.h"
#include "harness/profiler/profiler.h"

namespace dlreset::loops {

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

}  // namespace dlreset::loops
