// Mirrors the hooks of pytorch_lightning/callbacks/base.py @ 1.5.0 that dlreset needs.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "harness/data/batch.h"
#include "harness/lightning/states.h"

namespace dlreset::lightning {

/// Observes a fit: progress bars, recorders of losses and sample order. The vanilla loop
/// calls the same hooks, so one recorder serves every variant.
class Callback {
 public:
  virtual ~Callback() = default;
  virtual void on_sanity_check_start() {}
  virtual void on_sanity_check_end() {}
  virtual void on_train_epoch_start(int /*epoch*/, std::int64_t /*num_batches*/) {}
  virtual void on_train_batch_end(const data::Batch& /*batch*/, std::int64_t /*batch_idx*/, double /*loss*/) {}
  /// After the epoch's validation: Lightning 1.5 validates inside the training epoch.
  virtual void on_train_epoch_end(int /*epoch*/) {}
  /// `stage` is RunningStage::sanity_checking or RunningStage::validating.
  virtual void on_validation_start(RunningStage /*stage*/, std::int64_t /*num_batches*/) {}
  virtual void on_validation_batch_end(const data::Batch& /*batch*/, std::int64_t /*batch_idx*/, double /*loss*/) {}
  virtual void on_validation_end(RunningStage /*stage*/) {}
  /// After the data connector's teardown (`_post_dispatch`), as in Lightning 1.5.
  virtual void on_fit_end() {}
  /// An exception is leaving `Trainer::fit` (`_call_and_handle_interrupt`); it goes on after
  /// the hooks.
  virtual void on_exception(const std::exception& /*exception*/) {}
};

}  // namespace dlreset::lightning
