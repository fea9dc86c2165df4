// Mirrors pytorch_lightning/utilities/fetching.py @ 1.5.0: the parts 1.5.0 and 1.5.1 share.
// `reset()` and `teardown()` are where the two releases differ: repro/fetching.cpp holds
// 1.5.0's, fixed/fetching.cpp holds 1.5.1's.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "harness/data/batch_iterator.h"
#include "harness/profiler/profiler.h"
#include "harness/trace/traced.h"

namespace dlreset::lightning {

/// What `fetching_function` returns: the batch and whether it is the epoch's last.
struct FetchResult {
  data::Batch batch;
  bool is_last = false;
};

/// The arguments of `setup()` besides the dataloader. (Lightning's also takes a
/// `batch_to_device`, which its DataFetcher uses only with `store_on_device`; 1.5's loops move
/// the batch themselves, after `next()`.)
struct FetcherSetup {
  /// `RunningStage`'s value; names the profiler actions get_<stage>_batch and
  /// fetch_next_<stage>_batch.
  std::string stage = "train";
  profiler::Profiler* profiler = nullptr;
};

/// Lightning's AbstractDataFetcher. The loops call only `iter()` (Python's `__iter__`),
/// `next()` (`__next__`), `reset()` and `teardown()`: that is the seam between variants.
class AbstractDataFetcher {
 public:
  /// Keeps `prefetch_batches + 1` batches fetched ahead, as Lightning does: one more than asked,
  /// which is how the fetcher knows the last batch.
  explicit AbstractDataFetcher(int prefetch_batches = 0);
  virtual ~AbstractDataFetcher() = default;
  AbstractDataFetcher(const AbstractDataFetcher&) = delete;
  AbstractDataFetcher& operator=(const AbstractDataFetcher&) = delete;

  void setup(std::shared_ptr<data::BatchIterable> dataloader, FetcherSetup setup);
  /// `__iter__`: reset(), then iter(dataloader), then prefetch. A loop calls it at the start
  /// of every epoch (through `update_dataloader_iter`), which is why whatever `reset()` does
  /// happens every epoch.
  DLRESET_TRACED virtual void iter();
  /// `__next__`: the next batch and whether it is the last; throws StopIteration at the end.
  FetchResult next() { return fetching_function(); }
  /// 1.5.0: clears the counters *and* shuts the loader's workers down and nulls its iterator.
  /// 1.5.1: clears the counters only.
  virtual void reset() = 0;
  /// 1.5.0: reset(). 1.5.1: reset(), then the shutdown that 1.5.0 did in reset().
  virtual void teardown() = 0;

  std::int64_t fetched() const { return fetched_; }
  bool done() const { return done_; }
  data::BatchIterable& dataloader() const;

 protected:
  /// Fetches `prefetch_batches_` batches, from `__iter__`: the first waits for new workers.
  virtual void prefetching() = 0;
  virtual FetchResult fetching_function() = 0;

  /// Python's `isinstance(self.dataloader, T)`.
  template <typename T>
  T* dataloader_as() const {
    return dynamic_cast<T*>(dataloader_.get());
  }

  /// The user's value + 1, as Lightning stores it.
  int prefetch_batches_;
  std::shared_ptr<data::BatchIterable> dataloader_;
  /// `self.dataloader_iter`: holding it keeps the loader's iterator (and its workers) alive,
  /// exactly as the Python reference does.
  std::shared_ptr<data::BatchIterator> dataloader_iter_;
  std::int64_t fetched_ = 0;
  bool done_ = false;
  FetcherSetup setup_;
};

/// Lightning's DataFetcher: keeps one batch fetched ahead, which is how `is_last` is known.
/// The variants derive from it and give `reset()` and `teardown()`.
class DataFetcher : public AbstractDataFetcher {
 public:
  explicit DataFetcher(int prefetch_batches = 0) : AbstractDataFetcher(prefetch_batches) {}

 protected:
  void prefetching() override;
  FetchResult fetching_function() override;
  /// `_fetch_next_batch`: `next()` on the loader's iterator inside the profiler's
  /// `get_<stage>_batch` and, nested, `fetch_next_<stage>_batch`. It runs from the prefetch in
  /// `__iter__` too, so an epoch of N batches opens each N + 1 times (the last finds the end),
  /// and under the bug the wait for the new workers lands in the first.
  void fetch_next_batch();
  /// `_get_queued_batch`
  FetchResult get_queued_batch();

  std::deque<data::Batch> batches_;
};

/// Makes the fetcher of one variant (`DataConnector::_select_data_fetcher`).
using DataFetcherFactory = std::function<std::shared_ptr<AbstractDataFetcher>()>;

}  // namespace dlreset::lightning
