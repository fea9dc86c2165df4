// Mirrors pytorch_lightning/utilities/fetching.py @ 1.5.0: the parts 1.5.0 and 1.5.1 share.
#include "harness/loops/fetching.h"

#include <stdexcept>

#include "harness/loops/base.h"

namespace dlreset::loops {

AbstractDataFetcher::AbstractDataFetcher(int prefetch_batches) : prefetch_batches_(prefetch_batches) {
  if (prefetch_batches < 0) {
    throw std::invalid_argument("`prefetch_batches` should at least be 0, got " +
                                std::to_string(prefetch_batches) + ".");
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

FetchResult AbstractDataFetcher::next() {
  if (setup_.profiler == nullptr) return fetching_function();
  profiler::ProfileScope scope(*setup_.profiler, "get_" + setup_.stage + "_batch");
  return fetching_function();
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
  std::optional<data::Batch> batch = dataloader_iter_->next();
  if (!batch) throw StopIteration{};
  ++fetched_;
  batches_.push_back(std::move(*batch));
}

FetchResult DataFetcher::fetching_function() {
  if (batches_.empty()) throw StopIteration{};  // empty iterator, no prefetching done
  data::Batch batch = std::move(batches_.front());
  batches_.pop_front();
  if (!done_) {
    try {
      fetch_next_batch();
    } catch (const StopIteration&) {
      done_ = true;
    }
  }
  FetchResult result;
  result.is_last = batches_.empty();
  result.batch = setup_.batch_to_device ? setup_.batch_to_device(std::move(batch)) : std::move(batch);
  return result;
}

}  // namespace dlreset::loops
