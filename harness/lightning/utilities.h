// Mirrors pytorch_lightning/loops/utilities.py @ 1.5.0.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "harness/lightning/fetching.h"
#include "harness/trace/traced.h"

namespace dlreset::lightning {

/// Python's `enumerate(data_fetcher, start)`: building it calls `iter(data_fetcher)` at once,
/// and `next()` yields (index, (batch, is_last)).
class FetcherEnumerator {
 public:
  DLRESET_TRACED FetcherEnumerator(std::shared_ptr<AbstractDataFetcher> data_fetcher, std::int64_t start);
  /// Throws StopIteration at the end.
  std::pair<std::int64_t, FetchResult> next();

 private:
  std::shared_ptr<AbstractDataFetcher> data_fetcher_;
  std::int64_t index_;
};

/// `_update_dataloader_iter`: attach the dataloader, restoring the batch index.
DLRESET_TRACED std::unique_ptr<FetcherEnumerator> update_dataloader_iter(
    std::shared_ptr<AbstractDataFetcher> data_fetcher, std::int64_t batch_idx);

}  // namespace dlreset::lightning
