// Mirrors the hooks of pytorch_lightning/core/lightning.py @ 1.5.0 that the loops call.
#pragma once

#include <cstdint>

#include "harness/data/batch.h"

namespace dlreset::lightning {

/// The model side of a fit. Lightning's automatic optimization runs backward and the
/// optimizer step in the trainer; here `training_step` does the whole step, so the vanilla
/// loop and every Lightning variant run exactly the same code per batch.
class LightningModule {
 public:
  virtual ~LightningModule() = default;
  /// Forward, loss, backward and optimizer step; returns the batch's mean loss.
  virtual double training_step(const data::Batch& batch, std::int64_t batch_idx) = 0;
  /// Forward and loss without gradients; returns the batch's mean loss.
  virtual double validation_step(const data::Batch& batch, std::int64_t batch_idx) = 0;
  /// Lightning's batch_to_device: the fetcher applies it to every batch it hands out.
  virtual data::Batch transfer_batch_to_device(data::Batch batch) { return batch; }
};

}  // namespace dlreset::lightning
