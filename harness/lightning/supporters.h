// Mirrors pytorch_lightning/trainer/supporters.py @ 1.5.0: CombinedLoader and its iterator.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "harness/data/batch_iterator.h"
#include "harness/data/data_loader.h"
#include "harness/trace/traced.h"

namespace dlreset::lightning {

/// Lightning's CombinedLoaderIterator. Creates the loader's iterator lazily, on the first
/// batch: so `iter(combined_loader)` alone starts no workers.
class CombinedLoaderIterator : public data::BatchIterator {
 public:
  explicit CombinedLoaderIterator(std::shared_ptr<data::DataLoader> loaders);
  /// `__next__` -> request_next_batch(loader_iters)
  std::optional<data::Batch> next() override;
  /// The `loader_iters` property: `iter(loader)` on first use.
  std::shared_ptr<data::BatchIterator>& loader_iters();
  /// `self._loader_iters = None`
  void drop_loader_iters() { loader_iters_ = nullptr; }

 private:
  std::shared_ptr<data::DataLoader> loaders_;
  std::shared_ptr<data::BatchIterator> loader_iters_;
};

/// Lightning's CombinedLoader, around the train dataloader. Lightning combines collections of
/// loaders; the mirror holds the one loader the Trainer gives it, which is all the bug needs.
class CombinedLoader : public data::BatchIterable {
 public:
  explicit CombinedLoader(std::shared_ptr<data::DataLoader> loaders);

  /// `__iter__`: a new CombinedLoaderIterator, remembered in `_iterator`.
  std::shared_ptr<data::BatchIterator> iter() override;
  std::int64_t size() const override { return loaders_->size(); }

  /// Shuts the loader's workers down if its iterator is a multi-process one, then nulls the
  /// loader's `_iterator` whatever it was: no look at persistent_workers. In 1.5.0 this ran at
  /// the start of every epoch.
  DLRESET_TRACED static void shutdown_workers_and_reset_iterator(data::DataLoader& dataloader);
  /// Drops the iterator's loader iterators and applies shutdown_workers_and_reset_iterator to
  /// the loader.
  DLRESET_TRACED void reset();

  data::DataLoader& loaders() { return *loaders_; }

 private:
  std::shared_ptr<data::DataLoader> loaders_;
  /// `self._iterator`
  std::shared_ptr<CombinedLoaderIterator> iterator_;
};

}  // namespace dlreset::lightning
