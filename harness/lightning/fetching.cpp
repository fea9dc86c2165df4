// Mirrors pytorch_lightning/utilities/fetching.py @ 1.5.0: the parts 1.5.0 and 1.5.1 share.
#include "harness/lightning/fetching.h"

#include <optional>
#include <stdexcept>
#include <utility>

#include "harness/lightning/base.h"

namespace dlreset::lightning {

AbstractDataFetcher::AbstractDataFetcher(int prefetch_batches) : prefetch_batches_(prefetch_batches + 1) {
  if (prefetch_batches < 0) {
    throw std::invalid_argument("`prefetch_batches` should at least be 0, got " + std::to_string(prefetch_batches) +
                                ".");
  }
}

void AbstractDataFetcher::setup(std::shared_ptr<data::BatchIterable> dataloader, FetcherSetup setup) {
  dataloader_ = std::move(dataloader);
  setup_ = std::move(setup);
}

data::BatchIterable& AbstractDataFetcher::dataloader() const {
  if (!dataloader_) {
    throw std::logic_error("The DataFetcher should have been `setup` with a dataloader iterable.");
  }
  return *dataloader_;
}

void AbstractDataFetcher::iter() {
  reset();
  dataloader_iter_ = dataloader().iter();
  prefetching();
}

void DataFetcher::prefetching() {
  for (int i = 0; i < prefetch_batches_; ++i) {
    try {
      fetch_next_batch();
    } catch (const StopIteration&) {
      break;
    }
  }
}

void DataFetcher::fetch_next_batch() {
  std::optional<profiler::ProfileScope> get_batch;
  if (setup_.profiler != nullptr) get_batch.emplace(*setup_.profiler, "get_" + setup_.stage + "_batch");
  std::optional<data::Batch> batch;
  {
    std::optional<profiler::ProfileScope> fetch_next;
    if (setup_.profiler != nullptr) {
      fetch_next.emplace(*setup_.profiler, "fetch_next_" + setup_.stage + "_batch");
    }
    batch = dataloader_iter_->next();
  }
  if (!batch) throw StopIteration{};
  ++fetched_;
  batches_.push_back(std::move(*batch));
}

FetchResult DataFetcher::get_queued_batch() {
  FetchResult result;
  result.batch = std::move(batches_.front());
  batches_.pop_front();
  result.is_last = batches_.empty();
  return result;
}

FetchResult DataFetcher::fetching_function() {
  if (done_) {
    if (!batches_.empty()) return get_queued_batch();
    throw StopIteration{};
  }
  if (batches_.empty()) throw StopIteration{};  // empty iterator, no prefetching done
  data::Batch yield_batch = std::move(batches_.front());
  batches_.pop_front();
  try {
    fetch_next_batch();
  } catch (const StopIteration&) {
    batches_.push_front(std::move(yield_batch));
    done_ = true;
    return get_queued_batch();
  }
  FetchResult result;
  result.batch = std::move(yield_batch);
  return result;
}

}  // namespace dlreset::lightning
