// Mirrors pytorch_lightning/utilities/fetching.py @ 1.5.1: DataFetcher.reset and teardown.
#include "fixed/fetching.h"

#include "harness/lightning/supporters.h"

namespace dlreset::fixed {

void DataFetcher::reset() {
  batches_.clear();
  fetched_ = 0;
  done_ = false;
}

void DataFetcher::teardown() {
  reset();
  if (auto* combined_loader = dataloader_as<lightning::CombinedLoader>()) {
    combined_loader->reset();
  }
  if (auto* dataloader = dataloader_as<data::DataLoader>()) {
    lightning::CombinedLoader::shutdown_workers_and_reset_iterator(*dataloader);
  }
  dataloader_iter_ = nullptr;
}

std::shared_ptr<lightning::AbstractDataFetcher> make_data_fetcher() { return std::make_shared<DataFetcher>(); }

}  // namespace dlreset::fixed
