// Python's iterator and iterable protocols, for the loaders and the loops.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "harness/data/batch.h"

namespace dlreset::data {

/// `next(it)`: a batch, or nullopt where Python raises StopIteration.
class BatchIterator {
 public:
  virtual ~BatchIterator() = default;
  virtual std::optional<Batch> next() = 0;
};

/// `iter(x)` and `len(x)`: what a DataLoader and Lightning's CombinedLoader both offer.
class BatchIterable {
 public:
  virtual ~BatchIterable() = default;
  virtual std::shared_ptr<BatchIterator> iter() = 0;
  /// Number of batches in an epoch.
  virtual std::int64_t size() const = 0;
};

}  // namespace dlreset::data
