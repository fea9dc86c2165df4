// Mirrors pytorch_lightning/loops/epoch/training_epoch_loop.py @ 1.5.0.
#pragma once

#include <cstdint>
#include <memory>

#include "harness/lightning/base.h"
#include "harness/lightning/evaluation_loop.h"
#include "harness/lightning/utilities.h"

namespace dlreset::lightning {

/// One advance is one training batch; after the epoch's last batch it runs the validation
/// loop (Lightning 1.5 validates from inside the training epoch).
class TrainingEpochLoop : public Loop {
 public:
  TrainingEpochLoop();

  bool done() const override;
  void reset() override;
  /// Attaches the fetcher: `_update_dataloader_iter(data_fetcher, batch_idx + 1)`, which runs
  /// `iter(data_fetcher)` and so the fetcher's `reset()`: in 1.5.0 the line that killed the
  /// workers at the start of every epoch.
  DLRESET_TRACED void on_run_start(const RunArgs& args) override;
  void advance(const RunArgs& args) override;
  void on_advance_end() override;
  void on_run_end() override;
  void connect_trainer(Trainer* trainer) override;

  EvaluationLoop& val_loop() { return *val_loop_; }

 private:
  bool should_check_val() const;
  DLRESET_TRACED void run_validation();

  std::int64_t batches_ready_ = 0;  ///< batch_progress.current.ready
  bool is_last_batch_ = false;
  std::unique_ptr<FetcherEnumerator> dataloader_iter_;
  std::unique_ptr<EvaluationLoop> val_loop_;
};

}  // namespace dlreset::lightning
