// Mirrors pytorch_lightning/loops/dataloader/evaluation_loop.py @ 1.5.0.
#include "harness/lightning/evaluation_loop.h"

#include <cstdint>
#include <memory>

#include "harness/lightning/data_connector.h"
#include "harness/lightning/trainer.h"

namespace dlreset::lightning {

void EvaluationLoop::connect_trainer(Trainer* trainer) {
  Loop::connect_trainer(trainer);
  epoch_loop_.connect_trainer(trainer);
}

int EvaluationLoop::num_dataloaders() const { return trainer_->val_dataloader() ? 1 : 0; }

std::int64_t EvaluationLoop::max_batches() const {
  return trainer_->sanity_checking() ? trainer_->num_sanity_val_batches() : trainer_->num_val_batches();
}

bool EvaluationLoop::skip() const { return num_dataloaders() == 0 || max_batches() <= 0; }

void EvaluationLoop::on_run_start(const RunArgs& /*args*/) {
  const RunningStage stage = *trainer_->stage();
  const std::int64_t batches = max_batches();
  trainer_->call_hook([&](Callback& callback) { callback.on_validation_start(stage, batches); });
}

void EvaluationLoop::advance(const RunArgs& /*args*/) {
  const int dataloader_idx = current_dataloader_idx_;
  std::shared_ptr<AbstractDataFetcher> data_fetcher =
      trainer_->data_connector().get_profiled_dataloader(trainer_->val_dataloader(), *trainer_->stage());
  epoch_loop_.run(RunArgs{data_fetcher, dataloader_idx, max_batches()});
}

void EvaluationLoop::on_run_end() {
  const RunningStage stage = *trainer_->stage();
  trainer_->call_hook([&](Callback& callback) { callback.on_validation_end(stage); });
}

}  // namespace dlreset::lightning
