// Mirrors pytorch_lightning/trainer/trainer.py @ 1.5.0: fit, the sanity check and teardown.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "harness/data/data_loader.h"
#include "harness/loops/lightning_module.h"
#include "harness/loops/trainer_options.h"
#include "harness/profiler/profiler.h"
#include "harness/trace/traced.h"

namespace dlreset::loops {

class CombinedLoader;
class DataConnector;
class EvaluationLoop;
class FitLoop;

/// Runs `fit` the way Lightning 1.5 does: the sanity check on the validation loader, then
/// FitLoop (a TrainingEpochLoop per epoch, validating at its end), then teardown of every
/// fetcher. Which release's DataFetcher it uses comes from the options.
class Trainer {
 public:
  explicit Trainer(TrainerOptions options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  /// `trainer.fit(model, train_dataloaders, val_dataloaders)`. The train loader is wrapped in
  /// a CombinedLoader, as Lightning does; `val_dataloader` may be null.
  void fit(LightningModule& model, std::shared_ptr<data::DataLoader> train_dataloader,
           std::shared_ptr<data::DataLoader> val_dataloader = nullptr);

  // What the loops read from their trainer.
  LightningModule& lightning_module();
  DataConnector& data_connector() { return *data_connector_; }
  profiler::Profiler& profiler() { return *profiler_; }
  const TrainerOptions& options() const { return options_; }
  std::shared_ptr<CombinedLoader> train_dataloader() const { return train_dataloader_; }
  std::shared_ptr<data::DataLoader> val_dataloader() const { return val_dataloader_; }
  /// min(len(train loader), limit_train_batches)
  std::int64_t num_training_batches() const;
  /// min(len(val loader), limit_val_batches); 0 without a val loader.
  std::int64_t num_val_batches() const;
  /// min(num_sanity_val_steps, num_val_batches)
  std::int64_t num_sanity_val_batches() const;
  bool sanity_checking() const { return stage_ == "sanity_check"; }
  /// "train", "sanity_check" or "validate".
  const std::string& stage() const { return stage_; }
  /// Sets the running stage (and tells the event log, so a reset knows where it happened).
  void set_stage(const std::string& stage);
  void set_current_epoch(int epoch);
  int current_epoch() const { return current_epoch_; }
  EvaluationLoop& evaluation_loop();

  template <typename Hook>
  void call_hook(Hook&& hook) {
    call_callbacks(options_, std::forward<Hook>(hook));
  }

 private:
  /// `_run_train`: the sanity check, then the fit loop.
  DLRESET_TRACED void run_train();
  /// `_run_sanity_check`
  DLRESET_TRACED void run_sanity_check();
  /// `_post_dispatch`: the data connector's teardown.
  DLRESET_TRACED void post_dispatch();
  void update_event_context();

  TrainerOptions options_;
  std::unique_ptr<profiler::Profiler> default_profiler_;
  profiler::Profiler* profiler_;
  std::unique_ptr<DataConnector> data_connector_;
  std::unique_ptr<FitLoop> fit_loop_;
  LightningModule* model_ = nullptr;
  std::shared_ptr<CombinedLoader> train_dataloader_;
  std::shared_ptr<data::DataLoader> val_dataloader_;
  std::string stage_;
  std::string phase_;
  int current_epoch_ = 0;
};

}  // namespace dlreset::loops
