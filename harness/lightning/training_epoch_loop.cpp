// Mirrors pytorch_lightning/loops/epoch/training_epoch_loop.py @ 1.5.0.
#include "harness/lightning/training_epoch_loop.h"

#include <cstdint>
#include <utility>

#include "harness/lightning/trainer.h"

namespace dlreset::lightning {

TrainingEpochLoop::TrainingEpochLoop() : val_loop_(std::make_unique<EvaluationLoop>()) {}

bool TrainingEpochLoop::done() const { return batches_ready_ >= trainer_->num_training_batches() || is_last_batch_; }

void TrainingEpochLoop::reset() {
  batches_ready_ = 0;
  is_last_batch_ = false;
}

void TrainingEpochLoop::connect_trainer(Trainer* trainer) {
  Loop::connect_trainer(trainer);
  val_loop_->connect_trainer(trainer);
}

void TrainingEpochLoop::on_run_start(const RunArgs& args) {
  const int epoch = trainer_->current_epoch();
  const std::int64_t batches = trainer_->num_training_batches();
  trainer_->call_hook([&](Callback& callback) { callback.on_train_epoch_start(epoch, batches); });
  const std::int64_t batch_idx = batches_ready_ - 1;
  dataloader_iter_ = update_dataloader_iter(args.data_fetcher, batch_idx + 1);
}

void TrainingEpochLoop::advance(const RunArgs& /*args*/) {
  auto [batch_idx, fetched] = dataloader_iter_->next();
  is_last_batch_ = fetched.is_last;
  {
    profiler::ProfileScope scope(trainer_->profiler(), "training_batch_to_device");
    fetched.batch = trainer_->lightning_module().transfer_batch_to_device(std::move(fetched.batch));
  }
  ++batches_ready_;
  double loss = 0.0;
  {
    profiler::ProfileScope scope(trainer_->profiler(), "run_training_batch");
    loss = trainer_->lightning_module().training_step(fetched.batch, batch_idx);
  }
  trainer_->call_hook([&](Callback& callback) { callback.on_train_batch_end(fetched.batch, batch_idx, loss); });
}

bool TrainingEpochLoop::should_check_val() const {
  if (trainer_->num_val_batches() <= 0) return false;
  return is_last_batch_ || batches_ready_ >= trainer_->num_training_batches();
}

void TrainingEpochLoop::on_advance_end() {
  if (should_check_val()) run_validation();
}

void TrainingEpochLoop::run_validation() {
  trainer_->set_stage(RunningStage::validating);
  val_loop_->run();
  trainer_->set_stage(RunningStage::training);
}

void TrainingEpochLoop::on_run_end() {
  const int epoch = trainer_->current_epoch();
  trainer_->call_hook([&](Callback& callback) { callback.on_train_epoch_end(epoch); });
}

}  // namespace dlreset::lightning
