// Mirrors pytorch_lightning/trainer/data_loading.py @ 1.5.0: the sampler a DDP rank's loaders get.
#include "harness/lightning/data_loading.h"

#include <utility>

namespace dlreset::lightning {

bool requires_distributed_sampler(const TrainerOptions& options, data::DataLoader& dataloader) {
  return options.replace_sampler_ddp && options.distributed.has_value() &&
         dynamic_cast<const data::DistributedSampler*>(&dataloader.sampler()) == nullptr;
}

std::unique_ptr<data::DistributedSampler> get_distributed_sampler(const TrainerOptions& options,
                                                                  const data::DataLoader& dataloader, bool shuffle) {
  data::DistributedSamplerOptions kwargs;
  kwargs.num_replicas = options.distributed->num_replicas;
  kwargs.rank = options.distributed->rank;
  kwargs.shuffle = shuffle;
  kwargs.seed = options.distributed->seed;
  return std::make_unique<data::DistributedSampler>(dataloader.shared_dataset()->size(), kwargs);
}

std::shared_ptr<data::DataLoader> update_dataloader(data::DataLoader& dataloader,
                                                    std::unique_ptr<data::Sampler> sampler) {
  data::DataLoaderOptions options = dataloader.options();
  options.shuffle = false;
  auto updated =
      std::make_shared<data::DataLoader>(dataloader.shared_dataset(), std::move(options), std::move(sampler));
  // Lightning passes every argument of the user's loader on; the pin function is one of them.
  if (dataloader.custom_pin_memory()) updated->set_pin_memory_function(dataloader.custom_pin_memory());
  return updated;
}

std::shared_ptr<data::DataLoader> prepare_dataloader(const TrainerOptions& options,
                                                     std::shared_ptr<data::DataLoader> dataloader, bool shuffle) {
  if (!dataloader || !requires_distributed_sampler(options, *dataloader)) return dataloader;
  std::unique_ptr<data::DistributedSampler> sampler = get_distributed_sampler(options, *dataloader, shuffle);
  return update_dataloader(*dataloader, std::move(sampler));
}

}  // namespace dlreset::lightning
