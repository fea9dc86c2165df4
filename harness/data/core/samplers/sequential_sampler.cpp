// Mirrors SequentialSampler of torch/utils/data/sampler.py @ v1.13.1.
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "harness/data/core/samplers/sequential_sampler.h"

namespace dlreset::data {

std::vector<std::int64_t> SequentialSampler::epoch_order() {
  std::vector<std::int64_t> order(static_cast<std::size_t>(size_));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  return order;
}

}  // namespace dlreset::data
