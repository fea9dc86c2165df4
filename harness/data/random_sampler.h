// Mirrors RandomSampler of torch/utils/data/sampler.py @ v1.10.0.
#pragma once

#include <random>

#include "harness/data/sampler.h"

namespace dlreset::data {

/// A new permutation every epoch, drawn from one generator seeded once: the same seed gives the
/// same sequence of epochs, and no two epochs are alike.
class RandomSampler : public Sampler {
 public:
  RandomSampler(std::int64_t size, std::uint64_t seed) : size_(size), generator_(seed) {}
  std::vector<std::int64_t> epoch_order() override;
  std::int64_t size() const override { return size_; }

 private:
  std::int64_t size_;
  /// mt19937_64 and our own Fisher-Yates (not std::shuffle, whose algorithm the standard leaves
  /// open), so an order is the same on every build.
  std::mt19937_64 generator_;
};

}  // namespace dlreset::data
