// The baseline: the loop a user writes by hand over plain DataLoaders, with no Lightning layers.
#pragma once

#include <memory>

#include "harness/data/data_loader.h"
#include "harness/lightning/lightning_module.h"
#include "harness/lightning/trainer_options.h"
#include "variants/variant.h"

namespace dlreset::variants {

/// Each epoch: train over `train_dataloader` (up to limit_train_batches), then validate over
/// `val_dataloader` (may be null; up to limit_val_batches). No sanity check, no fetchers, no
/// teardown: the loaders' own semantics decide what happens to their workers. Uses
/// `max_epochs`, the limits and the callbacks of `options`; ignores the data fetcher and the
/// sanity-check steps.
///
/// On a rank of a multi-rank job (`options.distributed`) it does what a hand-written DDP script
/// does: builds each loader again over the same dataset with a DistributedSampler (shuffled for
/// training, in order for validation) and calls the training sampler's set_epoch before each
/// epoch's iter(). Returns the loaders it iterated.
FitLoaders vanilla_fit(lightning::LightningModule& model, std::shared_ptr<data::DataLoader> train_dataloader,
                       std::shared_ptr<data::DataLoader> val_dataloader, const lightning::TrainerOptions& options);

}  // namespace dlreset::variants
