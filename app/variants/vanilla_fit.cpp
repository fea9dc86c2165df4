#include "app/variants/vanilla_fit.h"

#include <algorithm>

#include "harness/trace/event_log.h"

namespace dlreset::variants {

using loops::call_callbacks;
using loops::Callback;
using loops::limited;
using loops::RunningStage;

void vanilla_fit(loops::LightningModule& model, data::DataLoader& train_dataloader,
                 data::DataLoader* val_dataloader, const loops::TrainerOptions& options) {
  trace::EventLog& log = trace::EventLog::global();
  const std::int64_t train_batches = limited(train_dataloader.size(), options.limit_train_batches);
  const std::int64_t val_batches =
      val_dataloader != nullptr ? limited(val_dataloader->size(), options.limit_val_batches) : 0;
  for (int epoch = 0; epoch < options.max_epochs; ++epoch) {
    log.set_context({epoch, "fit", loops::value(RunningStage::training)});
    call_callbacks(options, [&](Callback& c) { c.on_train_epoch_start(epoch, train_batches); });
    {
      auto batches = train_dataloader.iter();
      for (std::int64_t batch_idx = 0; batch_idx < train_batches; ++batch_idx) {
        std::optional<data::Batch> batch = batches->next();
        if (!batch) break;
        data::Batch on_device = model.transfer_batch_to_device(std::move(*batch));
        const double loss = model.training_step(on_device, batch_idx);
        call_callbacks(options, [&](Callback& c) { c.on_train_batch_end(on_device, batch_idx, loss); });
      }
    }
    if (val_batches > 0) {
      log.set_context({epoch, "fit", loops::value(RunningStage::validating)});
      call_callbacks(options, [&](Callback& c) { c.on_validation_start(RunningStage::validating, val_batches); });
      auto batches = val_dataloader->iter();
      for (std::int64_t batch_idx = 0; batch_idx < val_batches; ++batch_idx) {
        std::optional<data::Batch> batch = batches->next();
        if (!batch) break;
        data::Batch on_device = model.transfer_batch_to_device(std::move(*batch));
        const double loss = model.validation_step(on_device, batch_idx);
        call_callbacks(options,
                  [&](Callback& c) { c.on_validation_batch_end(on_device, batch_idx, loss); });
      }
      call_callbacks(options, [&](Callback& c) { c.on_validation_end(RunningStage::validating); });
    }
    call_callbacks(options, [&](Callback& c) { c.on_train_epoch_end(epoch); });
  }
  call_callbacks(options, [](Callback& c) { c.on_fit_end(); });
  log.set_context({});
}

}  // namespace dlreset::variants
