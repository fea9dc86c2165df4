// Mirrors pytorch_lightning/loops/epoch/evaluation_epoch_loop.py @ 1.5.0.
#include "harness/lightning/evaluation_epoch_loop.h"

#include <utility>

#include "harness/lightning/trainer.h"

namespace dlreset::lightning {

void EvaluationEpochLoop::reset() {
  dl_max_batches_ = 0;
  batches_ready_ = 0;
  batches_completed_ = 0;
}

void EvaluationEpochLoop::on_run_start(const RunArgs& args) {
  dl_max_batches_ = args.dl_max_batches;
  dataloader_iter_ = update_dataloader_iter(args.data_fetcher, batches_ready_);
}

void EvaluationEpochLoop::advance(const RunArgs& /*args*/) {
  auto [batch_idx, fetched] = dataloader_iter_->next();
  {
    profiler::ProfileScope scope(trainer_->profiler(), "evaluation_batch_to_device");
    fetched.batch = trainer_->lightning_module().transfer_batch_to_device(std::move(fetched.batch));
  }
  ++batches_ready_;
  double loss = 0.0;
  {
    profiler::ProfileScope scope(trainer_->profiler(), "evaluation_step_and_end");
    // `_evaluation_step`: the accelerator's `validation_step` opens its own action.
    profiler::ProfileScope step(trainer_->profiler(), "validation_step");
    loss = trainer_->lightning_module().validation_step(fetched.batch, batch_idx);
  }
  ++batches_completed_;
  trainer_->call_hook([&](Callback& callback) { callback.on_validation_batch_end(fetched.batch, batch_idx, loss); });
}

}  // namespace dlreset::lightning
