// Mirrors torch/utils/data/sampler.py @ v1.13.1: the Sampler interface.
#pragma once

#include <cstdint>
#include <vector>

namespace dlreset::data {

/// Yields the dataset indices of one epoch. Iterating again starts a new epoch.
class Sampler {
 public:
  virtual ~Sampler() = default;
  /// The order of the next epoch (`iter(sampler)`); a random sampler draws a new one each call.
  virtual std::vector<std::int64_t> epoch_order() = 0;
  /// Called once an epoch, when its order has been read past its end: torch's RandomSampler
  /// draws one more permutation there (its `__iter__` ends with `randperm(n)[:num_samples %
  /// n]`, drawn even when that slice is empty), and the next epoch's order depends on it.
  virtual void on_exhausted() {}
  virtual std::int64_t size() const = 0;
};

}  // namespace dlreset::data
