// The four ways dlreset runs the same workload, chosen at run time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/data/data_loader.h"
#include "harness/lightning/lightning_module.h"
#include "harness/lightning/trainer_options.h"

namespace dlreset::variants {

enum class Variant {
  buggy,       ///< Lightning 1.5.0's DataFetcher (repro/): reset() kills the workers every epoch.
  fixed,       ///< Lightning 1.5.1's DataFetcher (fixed/): the shutdown moved to teardown().
  workaround,  ///< 1.5.0 with reset() deleted from __iter__, the reporter's patch (fixed/).
  vanilla,     ///< A hand-written loop over the loaders: no Lightning layers, no sanity check.
};

const char* to_string(Variant variant);
/// "buggy", "fixed", "workaround" or "vanilla"; nullopt for anything else.
std::optional<Variant> parse_variant(const std::string& text);
const std::vector<Variant>& all_variants();
/// One line on what the variant is, for --help and reports.
const char* describe(Variant variant);

/// The DataFetcher factory of a Lightning variant; throws for vanilla, which has none.
lightning::DataFetcherFactory data_fetcher_factory(Variant variant);

/// The loaders a fit iterated: the ones it was given or, on a rank of a multi-rank job
/// (TrainerOptions::distributed), the copies with this rank's DistributedSampler that replaced
/// them. They hold the counters a report reads.
struct FitLoaders {
  std::shared_ptr<data::DataLoader> train;
  std::shared_ptr<data::DataLoader> val;
};

/// Fits `model` on the loaders with the variant: Lightning's Trainer with the variant's
/// fetcher (sanity check, validation after each epoch, teardown), or the vanilla loop.
/// `options.data_fetcher` is filled in here.
FitLoaders fit(Variant variant, lightning::LightningModule& model, std::shared_ptr<data::DataLoader> train_dataloader,
               std::shared_ptr<data::DataLoader> val_dataloader, lightning::TrainerOptions options);

}  // namespace dlreset::variants
