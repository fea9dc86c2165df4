#include "variants/vanilla_fit.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "harness/data/distributed_sampler.h"
#include "harness/trace/event_log.h"

namespace dlreset::variants {

using lightning::call_callbacks;
using lightning::Callback;
using lightning::limited;
using lightning::RunningStage;

namespace {

/// `DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=shuffle), ...)` with the
/// other arguments of `dataloader`.
std::shared_ptr<data::DataLoader> with_distributed_sampler(const data::DataLoader& dataloader,
                                                           const lightning::DistributedSamplerKwargs& job,
                                                           bool shuffle) {
  data::DistributedSamplerOptions sampler;
  sampler.num_replicas = job.num_replicas;
  sampler.rank = job.rank;
  sampler.shuffle = shuffle;
  sampler.seed = job.seed;
  data::DataLoaderOptions options = dataloader.options();
  options.shuffle = false;
  return std::make_shared<data::DataLoader>(
      dataloader.shared_dataset(), std::move(options),
      std::make_unique<data::DistributedSampler>(dataloader.shared_dataset()->size(), sampler));
}

/// `for batch_idx, batch in enumerate(dataloader)`, stopping after `limit` batches: each batch
/// moved to the model's device and handed to `step`. The iterator goes when the loop ends, as
/// Python's does, so a loader that is not persistent shuts its workers down there.
template <typename Step>
void for_each_batch(data::DataLoader& dataloader, std::int64_t limit, lightning::LightningModule& model, Step&& step) {
  auto batches = dataloader.iter();
  for (std::int64_t batch_idx = 0; batch_idx < limit; ++batch_idx) {
    std::optional<data::Batch> batch = batches->next();
    if (!batch) break;
    step(model.transfer_batch_to_device(std::move(*batch)), batch_idx);
  }
}

}  // namespace

FitLoaders vanilla_fit(lightning::LightningModule& model, std::shared_ptr<data::DataLoader> train_dataloader,
                       std::shared_ptr<data::DataLoader> val_dataloader, const lightning::TrainerOptions& options) {
  if (options.distributed) {
    train_dataloader = with_distributed_sampler(*train_dataloader, *options.distributed, /*shuffle=*/true);
    if (val_dataloader) val_dataloader = with_distributed_sampler(*val_dataloader, *options.distributed, false);
  }
  auto* train_sampler = dynamic_cast<data::DistributedSampler*>(&train_dataloader->sampler());
  trace::EventLog& log = trace::EventLog::global();
  const std::int64_t train_batches = limited(train_dataloader->size(), options.limit_train_batches);
  const std::int64_t val_batches =
      val_dataloader != nullptr ? limited(val_dataloader->size(), options.limit_val_batches) : 0;
  for (int epoch = 0; epoch < options.max_epochs; ++epoch) {
    log.set_context({epoch, "fit", lightning::value(RunningStage::training)});
    call_callbacks(options, [&](Callback& c) { c.on_train_epoch_start(epoch, train_batches); });
    // Before iter(): a persistent iterator draws the epoch's order when it is reset there.
    if (train_sampler != nullptr) train_sampler->set_epoch(epoch);
    for_each_batch(*train_dataloader, train_batches, model, [&](const data::Batch& batch, std::int64_t batch_idx) {
      const double loss = model.training_step(batch, batch_idx);
      call_callbacks(options, [&](Callback& c) { c.on_train_batch_end(batch, batch_idx, loss); });
    });
    if (val_batches > 0) {
      log.set_context({epoch, "fit", lightning::value(RunningStage::validating)});
      call_callbacks(options, [&](Callback& c) { c.on_validation_start(RunningStage::validating, val_batches); });
      for_each_batch(*val_dataloader, val_batches, model, [&](const data::Batch& batch, std::int64_t batch_idx) {
        const double loss = model.validation_step(batch, batch_idx);
        call_callbacks(options, [&](Callback& c) { c.on_validation_batch_end(batch, batch_idx, loss); });
      });
      call_callbacks(options, [&](Callback& c) { c.on_validation_end(RunningStage::validating); });
    }
    call_callbacks(options, [&](Callback& c) { c.on_train_epoch_end(epoch); });
  }
  call_callbacks(options, [](Callback& c) { c.on_fit_end(); });
  log.set_context({});
  return {train_dataloader, val_dataloader};
}

}  // namespace dlreset::variants
