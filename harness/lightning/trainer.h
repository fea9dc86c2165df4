// Mirrors pytorch_lightning/trainer/trainer.py @ 1.5.0: fit, the sanity check and teardown.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "harness/data/data_loader.h"
#include "harness/lightning/lightning_module.h"
#include "harness/lightning/states.h"
#include "harness/lightning/trainer_options.h"
#include "harness/lightning/training_type_plugin.h"
#include "harness/profiler/profiler.h"
#include "harness/trace/traced.h"

namespace dlreset::lightning {

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
  /// a CombinedLoader, as Lightning does; `val_dataloader` may be null. The calls below it are
  /// 1.5.0's: `_call_and_handle_interrupt` → `_fit_impl` → `_run` → `_dispatch` →
  /// `TrainingTypePlugin.start_training` → `run_stage` → `_run_train`.
  DLRESET_TRACED void fit(LightningModule& model, std::shared_ptr<data::DataLoader> train_dataloader,
                          std::shared_ptr<data::DataLoader> val_dataloader = nullptr);
  /// `run_stage`: sets the profiler up for the stage ("fit"), then `_run_train`. Called back by
  /// TrainingTypePlugin::start_training.
  DLRESET_TRACED void run_stage();

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
  bool sanity_checking() const { return stage_ == RunningStage::sanity_checking; }
  /// `state.stage`: none outside fit, and after an exception left it.
  std::optional<RunningStage> stage() const { return stage_; }
  /// Sets the running stage (and tells the event log, so a reset knows where it happened).
  void set_stage(std::optional<RunningStage> stage);
  /// `state.status`: interrupted once an exception has left fit.
  TrainerStatus status() const { return status_; }
  void set_current_epoch(int epoch);
  int current_epoch() const { return current_epoch_; }
  EvaluationLoop& evaluation_loop();

  template <typename Hook>
  void call_hook(Hook&& hook) {
    call_callbacks(options_, std::forward<Hook>(hook));
  }

 private:
  /// What `fit` was given, until `_fit_impl` attaches it.
  struct FitArgs {
    LightningModule* model = nullptr;
    std::shared_ptr<data::DataLoader> train_dataloader;
    std::shared_ptr<data::DataLoader> val_dataloader;
  };

  /// `_call_and_handle_interrupt`: runs `trainer_fn`; when an exception leaves it, marks the
  /// trainer interrupted, clears the stage, calls the on_exception hooks and lets it go on.
  /// Like 1.5.0's, it tears nothing down: the fetchers, and with them the workers, go when the
  /// Trainer does. (1.5.0 swallows a KeyboardInterrupt there; dlreset's InterruptedError goes on,
  /// so that `dlreset run` can exit with the signal's status.)
  DLRESET_TRACED void call_and_handle_interrupt(void (Trainer::*trainer_fn)());
  /// `_fit_impl`: the state for fitting, the data attached, then `_run`.
  DLRESET_TRACED void fit_impl();
  /// `_run`: `_dispatch`, `_post_dispatch`, then the `on_fit_end` hooks.
  DLRESET_TRACED void run();
  /// `_dispatch`: hands the run to the training type plugin.
  DLRESET_TRACED void dispatch();
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
  TrainingTypePlugin training_type_plugin_;
  FitArgs fit_args_;
  LightningModule* model_ = nullptr;
  std::shared_ptr<CombinedLoader> train_dataloader_;
  std::shared_ptr<data::DataLoader> val_dataloader_;
  std::optional<RunningStage> stage_;
  TrainerStatus status_ = TrainerStatus::initializing;
  std::string phase_;
  int current_epoch_ = 0;
};

}  // namespace dlreset::lightning
