// The Trainer's options for the short fits the Lightning tests run.
#pragma once

#include <cstdint>

#include "harness/lightning/trainer_options.h"

namespace dlreset::testing {

/// `epochs` epochs of at most `train_batches` training and `val_batches` validation batches,
/// each; the rest as Lightning's defaults (two sanity-check steps, no callbacks).
inline lightning::TrainerOptions short_fit(int epochs, std::int64_t train_batches, std::int64_t val_batches) {
  lightning::TrainerOptions trainer;
  trainer.max_epochs = epochs;
  trainer.limit_train_batches = train_batches;
  trainer.limit_val_batches = val_batches;
  return trainer;
}

}  // namespace dlreset::testing
