// Mirrors torch/utils/data/sampler.py @ v1.10.0: the Sampler interface.
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
  virtual std::int64_t size() const = 0;
};

}  // namespace dlreset::data
