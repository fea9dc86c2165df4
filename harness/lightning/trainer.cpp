// Mirrors pytorch_lightning/trainer/trainer.py @ 1.5.0: fit and what it calls, down to the fit loop.
#include "harness/lightning/trainer.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "harness/lightning/data_connector.h"
#include "harness/lightning/data_loading.h"
#include "harness/lightning/evaluation_loop.h"
#include "harness/lightning/fit_loop.h"
#include "harness/lightning/supporters.h"
#include "harness/trace/event_log.h"

namespace dlreset::lightning {

Trainer::Trainer(TrainerOptions options) : options_(std::move(options)) {
  if (options_.max_epochs < 0) {
    throw std::invalid_argument("max_epochs must be 0 or more, got " + std::to_string(options_.max_epochs) + ".");
  }
  if (options_.profiler != nullptr) {
    profiler_ = options_.profiler;
  } else {
    default_profiler_ = std::make_unique<profiler::PassThroughProfiler>();
    profiler_ = default_profiler_.get();
  }
  data_connector_ = std::make_unique<DataConnector>(*this, options_.data_fetcher);
  fit_loop_ = std::make_unique<FitLoop>(options_.max_epochs);
  fit_loop_->connect_trainer(this);
}

Trainer::~Trainer() = default;

LightningModule& Trainer::lightning_module() {
  if (model_ == nullptr) throw std::logic_error("The Trainer has no model: call fit(model, ...).");
  return *model_;
}

std::int64_t Trainer::num_training_batches() const {
  return train_dataloader_ ? limited(train_dataloader_->size(), options_.limit_train_batches) : 0;
}

std::int64_t Trainer::num_val_batches() const {
  return val_dataloader_ ? limited(val_dataloader_->size(), options_.limit_val_batches) : 0;
}

std::int64_t Trainer::num_sanity_val_batches() const {
  return limited(num_val_batches(), options_.num_sanity_val_steps);
}

EvaluationLoop& Trainer::evaluation_loop() { return fit_loop_->epoch_loop().val_loop(); }

void Trainer::update_event_context() {
  trace::EventLog::global().set_context({current_epoch_, phase_, stage_ ? value(*stage_) : ""});
}

void Trainer::set_stage(std::optional<RunningStage> stage) {
  stage_ = stage;
  update_event_context();
}

void Trainer::set_current_epoch(int epoch) {
  current_epoch_ = epoch;
  update_event_context();
}

void Trainer::fit(LightningModule& model, std::shared_ptr<data::DataLoader> train_dataloader,
                  std::shared_ptr<data::DataLoader> val_dataloader) {
  if (!train_dataloader) throw std::invalid_argument("fit() needs a train dataloader.");
  fit_args_ = FitArgs{&model, std::move(train_dataloader), std::move(val_dataloader)};
  call_and_handle_interrupt(&Trainer::fit_impl);
}

void Trainer::call_and_handle_interrupt(void (Trainer::*trainer_fn)()) {
  try {
    (this->*trainer_fn)();
  } catch (const std::exception& exception) {
    status_ = TrainerStatus::interrupted;
    set_stage(std::nullopt);
    call_hook([&](Callback& callback) { callback.on_exception(exception); });
    throw;
  } catch (...) {
    status_ = TrainerStatus::interrupted;
    set_stage(std::nullopt);
    throw;
  }
}

void Trainer::fit_impl() {
  status_ = TrainerStatus::running;
  // `_data_connector.attach_data`, then what `reset_train_dataloader` and
  // `reset_val_dataloader` do to each loader: a DDP rank's are re-made with its shard, the
  // training one shuffled, the validation one in order.
  model_ = fit_args_.model;
  train_dataloader_ =
      std::make_shared<CombinedLoader>(prepare_dataloader(options_, std::move(fit_args_.train_dataloader),
                                                          /*shuffle=*/true));
  val_dataloader_ = prepare_dataloader(options_, std::move(fit_args_.val_dataloader), /*shuffle=*/false);
  fit_args_ = FitArgs{};
  phase_ = "fit";
  current_epoch_ = 0;
  run();
}

void Trainer::run() {
  dispatch();
  post_dispatch();
  call_hook([](Callback& callback) { callback.on_fit_end(); });
  if (status_ != TrainerStatus::interrupted) status_ = TrainerStatus::finished;
  set_stage(std::nullopt);
}

void Trainer::dispatch() { training_type_plugin_.start_training(*this); }

void Trainer::run_stage() {
  // `__setup_profiler`: the report is titled with the entry point ("FIT Profiler Report").
  profiler_->setup(value(TrainerFn::fitting));
  run_train();
}

void Trainer::run_train() {
  run_sanity_check();
  set_stage(RunningStage::training);
  fit_loop_->run();
}

void Trainer::run_sanity_check() {
  if (num_sanity_val_batches() <= 0) return;
  set_stage(RunningStage::sanity_checking);
  call_hook([](Callback& callback) { callback.on_sanity_check_start(); });
  evaluation_loop().run();
  call_hook([](Callback& callback) { callback.on_sanity_check_end(); });
}

void Trainer::post_dispatch() {
  phase_ = "teardown";
  update_event_context();
  data_connector_->teardown();
  trace::EventLog::global().set_context({});
}

}  // namespace dlreset::lightning
