// Mirrors pytorch_lightning/loops/fit_loop.py @ 1.5.0.
#pragma once

#include "harness/lightning/base.h"
#include "harness/lightning/training_epoch_loop.h"

namespace dlreset::lightning {

/// One advance is one epoch: a new fetcher from the data connector, then the epoch loop.
class FitLoop : public Loop {
 public:
  explicit FitLoop(int max_epochs);

  /// max_epochs reached, or nothing to train on (`num_training_batches == 0`: an empty train
  /// loader or limit_train_batches 0), as in 1.5.0; then not even the train workers start.
  bool done() const override;
  /// `skip`: done before the first epoch.
  bool skip() const override { return done(); }
  void reset() override {}
  void on_run_start(const RunArgs& args) override;
  void on_advance_start(const RunArgs& args) override;
  DLRESET_TRACED void advance(const RunArgs& args) override;
  void on_advance_end() override;
  void connect_trainer(Trainer* trainer) override;

  TrainingEpochLoop& epoch_loop() { return epoch_loop_; }
  int current_epoch() const { return current_epoch_; }

 private:
  int max_epochs_;
  int current_epoch_ = 0;
  TrainingEpochLoop epoch_loop_;
};

}  // namespace dlreset::lightning
