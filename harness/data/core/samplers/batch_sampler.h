// Mirrors BatchSampler of torch/utils/data/sampler.py @ v1.13.1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "harness/data/core/samplers/sampler.h"

namespace dlreset::data {

/// Groups a sampler's indices into batches of `batch_size`; the last, smaller batch is kept
/// unless `drop_last`.
class BatchSampler {
 public:
  BatchSampler(std::unique_ptr<Sampler> sampler, std::int64_t batch_size, bool drop_last);

  /// One epoch of index batches (`iter(batch_sampler)`). Like torch's generator-based
  /// `__iter__`, it asks the sampler for the epoch's order at its first `next()`, not when it is
  /// made: an iterator abandoned before its first batch draws nothing from the sampler's
  /// generator, so later epochs' orders stay torch's.
  class Iterator {
   public:
    Iterator() = default;
    /// `sampler` must outlive the iterator (the loader's state owns both).
    Iterator(Sampler* sampler, std::int64_t batch_size, bool drop_last)
        : sampler_(sampler), batch_size_(batch_size), drop_last_(drop_last) {}
    /// The next batch of indices, or nullopt at the end of the epoch.
    std::optional<std::vector<std::int64_t>> next();
    /// The same into `batch`, reusing its buffer or its allocator's pool, so that a loader's
    /// steady state allocates no index list per batch; false (and `batch` untouched) at the
    /// end of the epoch.
    template <typename Allocator>
    bool next(std::vector<std::int64_t, Allocator>& batch) {
      std::size_t first = 0;
      std::size_t take = 0;
      if (!next_range(first, take)) return false;
      const auto begin = order_.begin() + static_cast<std::ptrdiff_t>(first);
      batch.assign(begin, begin + static_cast<std::ptrdiff_t>(take));
      return true;
    }

   private:
    /// Where the next batch lies in order_ (`take` indices from `first`); false at the end.
    bool next_range(std::size_t& first, std::size_t& take);

    Sampler* sampler_ = nullptr;
    bool drawn_ = false;      ///< The first next() has asked the sampler for the order.
    bool exhausted_ = false;  ///< The order has been read past its end.
    std::vector<std::int64_t> order_;
    std::size_t position_ = 0;
    std::int64_t batch_size_ = 1;
    bool drop_last_ = false;
  };

  Iterator iter();
  /// Number of batches an epoch has (`len(batch_sampler)`).
  std::int64_t size() const;
  /// `batch_sampler.sampler`
  Sampler& sampler() { return *sampler_; }

 private:
  std::unique_ptr<Sampler> sampler_;
  std::int64_t batch_size_;
  bool drop_last_;
};

}  // namespace dlreset::data
