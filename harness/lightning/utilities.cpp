// Mirrors pytorch_lightning/loops/utilities.py @ 1.5.0.
#include "harness/lightning/utilities.h"

namespace dlreset::lightning {

FetcherEnumerator::FetcherEnumerator(std::shared_ptr<AbstractDataFetcher> data_fetcher, std::int64_t start)
    : data_fetcher_(std::move(data_fetcher)), index_(start) {
  data_fetcher_->iter();
}

std::pair<std::int64_t, FetchResult> FetcherEnumerator::next() {
  FetchResult result = data_fetcher_->next();
  return {index_++, std::move(result)};
}

std::unique_ptr<FetcherEnumerator> update_dataloader_iter(std::shared_ptr<AbstractDataFetcher> data_fetcher,
                                                          std::int64_t batch_idx) {
  auto dataloader_iter = std::make_unique<FetcherEnumerator>(std::move(data_fetcher), batch_idx);
  return dataloader_iter;
}

}  // namespace dlreset::lightning
