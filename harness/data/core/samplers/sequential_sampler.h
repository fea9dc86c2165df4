// Mirrors SequentialSampler of torch/utils/data/sampler.py @ v1.13.1.
#pragma once

#include "harness/data/core/samplers/sampler.h"

#include <cstdint>
#include <vector>

namespace dlreset::data {

/// 0, 1, ..., n-1, every epoch.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(std::int64_t size) : size_(size) {}
  std::vector<std::int64_t> epoch_order() override;
  std::int64_t size() const override { return size_; }

 private:
  std::int64_t size_;
};

}  // namespace dlreset::data
