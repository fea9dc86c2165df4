#include "variants/variant.h"

#include <stdexcept>
#include <utility>

#include "fixed/fetching.h"
#include "harness/lightning/supporters.h"
#include "harness/lightning/trainer.h"
#include "repro/fetching.h"
#include "variants/vanilla_fit.h"
#include "workaround/workaround.h"

namespace dlreset::variants {

const char* to_string(Variant variant) {
  switch (variant) {
    case Variant::buggy: return "buggy";
    case Variant::fixed: return "fixed";
    case Variant::workaround: return "workaround";
    case Variant::vanilla: return "vanilla";
  }
  return "unknown";
}

std::optional<Variant> parse_variant(const std::string& text) {
  for (Variant variant : all_variants()) {
    if (text == to_string(variant)) return variant;
  }
  return std::nullopt;
}

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> variants = {Variant::buggy, Variant::fixed, Variant::workaround, Variant::vanilla};
  return variants;
}

const char* describe(Variant variant) {
  switch (variant) {
    case Variant::buggy: return "Lightning 1.5.0: the fetcher's reset() shuts the workers down every epoch";
    case Variant::fixed: return "Lightning 1.5.1: reset() clears counters, teardown() shuts down";
    case Variant::workaround: return "Lightning 1.5.0 with reset() removed from __iter__ (the reporter's patch)";
    case Variant::vanilla: return "a plain loop over the DataLoaders, without Lightning";
  }
  return "";
}

lightning::DataFetcherFactory data_fetcher_factory(Variant variant) {
  switch (variant) {
    case Variant::buggy: return repro::make_data_fetcher;
    case Variant::fixed: return fixed::make_data_fetcher;
    case Variant::workaround: return workaround::make_workaround_data_fetcher;
    case Variant::vanilla: break;
  }
  throw std::invalid_argument("The vanilla variant runs no Lightning layers and has no DataFetcher.");
}

FitLoaders fit(Variant variant, lightning::LightningModule& model, std::shared_ptr<data::DataLoader> train_dataloader,
               std::shared_ptr<data::DataLoader> val_dataloader, lightning::TrainerOptions options) {
  if (variant == Variant::vanilla) {
    return vanilla_fit(model, std::move(train_dataloader), std::move(val_dataloader), options);
  }
  options.data_fetcher = data_fetcher_factory(variant);
  lightning::Trainer trainer(std::move(options));
  trainer.fit(model, std::move(train_dataloader), std::move(val_dataloader));
  // The Trainer's own loaders outlive it: the train one through its CombinedLoader.
  const std::shared_ptr<lightning::CombinedLoader> combined = trainer.train_dataloader();
  return {std::shared_ptr<data::DataLoader>(combined, &combined->loaders()), trainer.val_dataloader()};
}

}  // namespace dlreset::variants
