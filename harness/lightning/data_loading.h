// Mirrors pytorch_lightning/trainer/data_loading.py @ 1.5.0: the sampler a DDP rank's loaders get.
#pragma once

#include <memory>

#include "harness/data/data_loader.h"
#include "harness/data/distributed_sampler.h"
#include "harness/lightning/trainer_options.h"
#include "harness/trace/traced.h"

namespace dlreset::lightning {

/// `_requires_distributed_sampler`: replace_sampler_ddp is on, the strategy is distributed,
/// and the loader's sampler is not a DistributedSampler already.
bool requires_distributed_sampler(const TrainerOptions& options, data::DataLoader& dataloader);

/// `_get_distributed_sampler`: this rank's shard (`distributed_sampler_kwargs`), with
/// `shuffle` as the caller says and the seed of `PL_GLOBAL_SEED`; drop_last is torch's default.
std::unique_ptr<data::DistributedSampler> get_distributed_sampler(const TrainerOptions& options,
                                                                  const data::DataLoader& dataloader, bool shuffle);

/// `_update_dataloader`: a new DataLoader over the same dataset with the same options and pin
/// function, but `sampler` and shuffle off, as Lightning re-instantiates the user's loader.
std::shared_ptr<data::DataLoader> update_dataloader(data::DataLoader& dataloader,
                                                    std::unique_ptr<data::Sampler> sampler);

/// `prepare_dataloader`: where a distributed sampler is required, the loader re-made with one
/// (`shuffle` true for the training loader, false for validation, whatever the user's loader
/// did); otherwise the loader itself.
DLRESET_TRACED std::shared_ptr<data::DataLoader> prepare_dataloader(const TrainerOptions& options,
                                                                    std::shared_ptr<data::DataLoader> dataloader,
                                                                    bool shuffle);

}  // namespace dlreset::lightning
