// Mirrors pytorch_lightning/loops/fit_loop.py @ 1.5.0.
#include "harness/lightning/fit_loop.h"

#include <memory>

#include "harness/data/distributed_sampler.h"
#include "harness/lightning/data_connector.h"
#include "harness/lightning/supporters.h"
#include "harness/lightning/trainer.h"

namespace dlreset::lightning {

FitLoop::FitLoop(int max_epochs) : max_epochs_(max_epochs) {}

bool FitLoop::done() const { return current_epoch_ >= max_epochs_ || trainer_->num_training_batches() == 0; }

void FitLoop::connect_trainer(Trainer* trainer) {
  Loop::connect_trainer(trainer);
  epoch_loop_.connect_trainer(trainer);
}

void FitLoop::on_run_start(const RunArgs& /*args*/) { current_epoch_ = 0; }

void FitLoop::on_advance_start(const RunArgs& /*args*/) {
  trainer_->set_current_epoch(current_epoch_);
  trainer_->set_stage(RunningStage::training);
  // `self.trainer.train_dataloader.sampler.set_epoch(self.current_epoch)` where the sampler
  // has one: before this epoch's iter(), which draws the order.
  data::Sampler& sampler = trainer_->train_dataloader()->loaders().sampler();
  if (auto* distributed = dynamic_cast<data::DistributedSampler*>(&sampler)) distributed->set_epoch(current_epoch_);
}

void FitLoop::advance(const RunArgs& /*args*/) {
  std::shared_ptr<AbstractDataFetcher> data_fetcher =
      trainer_->data_connector().get_profiled_dataloader(trainer_->train_dataloader(), RunningStage::training);
  profiler::ProfileScope scope(trainer_->profiler(), "run_training_epoch");
  epoch_loop_.run(RunArgs{data_fetcher});
}

void FitLoop::on_advance_end() { ++current_epoch_; }

}  // namespace dlreset::lightning
