// Mirrors the Trainer arguments of pytorch_lightning/trainer/trainer.py @ 1.5.0 that matter here.
#pragma once

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

}  // namespace dlreset::loops
