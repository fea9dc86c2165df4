// The baseline: the loop a user writes by hand over plain DataLoaders, with no Lightning layers.
#pragma once

#include <memory>

#include "harness/data/data_loader.h"
#include "harness/loops/lightning_module.h"
#include "harness/loops/trainer_options.h"

namespace dlreset::variants {

/// Each epoch: train over `train_dataloader` (up to limit_train_batches), then validate over
/// `val_dataloader` (up to limit_val_batches). No sanity check, no fetchers, no teardown: the
/// loaders' own semantics decide what happens to their workers. Uses `max_epochs`, the limits
/// and the callbacks of `options`; ignores the data fetcher and the sanity-check steps.
void vanilla_fit(loops::LightningModule& model, data::DataLoader& train_dataloader,
                 data::DataLoader* val_dataloader, const loops::TrainerOptions& options);

}  // namespace dlreset::variants
