// Mirrors pytorch_lightning/loops/dataloader/evaluation_loop.py @ 1.5.0.
#pragma once

#include "harness/lightning/base.h"

#include <cstdint>

#include "harness/lightning/evaluation_epoch_loop.h"

namespace dlreset::lightning {

/// Runs the evaluation epoch loop over each validation dataloader (here: the one), with a new
/// fetcher every run: the sanity check, and the validation after every training epoch.
class EvaluationLoop : public Loop {
 public:
  bool done() const override { return current_dataloader_idx_ >= num_dataloaders(); }
  bool skip() const override;
  void reset() override { current_dataloader_idx_ = 0; }
  void on_run_start(const RunArgs& args) override;
  DLRESET_TRACED void advance(const RunArgs& args) override;
  void on_advance_end() override { ++current_dataloader_idx_; }
  void on_run_end() override;
  void connect_trainer(Trainer* trainer) override;

 private:
  int num_dataloaders() const;
  /// The batch limit of this run: the sanity check's or validation's.
  std::int64_t max_batches() const;

  int current_dataloader_idx_ = 0;
  EvaluationEpochLoop epoch_loop_;
};

}  // namespace dlreset::lightning
