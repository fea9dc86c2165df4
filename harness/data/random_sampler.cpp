// Mirrors torch/utils/data/sampler.py @ v1.13.1: RandomSampler. Apart from the torch-free core,
// as its torch seed mode draws its permutations with LibTorch's randperm.
#include "harness/data/random_sampler.h"

#include <ATen/core/Tensor.h>
#include <ATen/ops/randperm.h>

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace dlreset::data {

std::vector<std::int64_t> torch_randperm(std::int64_t n, at::Generator& generator) {
  const at::Tensor permutation = at::randperm(n, generator, at::kLong);
  const std::int64_t* values = permutation.data_ptr<std::int64_t>();
  return std::vector<std::int64_t>(values, values + n);
}

std::vector<std::int64_t> RandomSampler::epoch_order() {
  if (torch_generator_) return torch_randperm(size_, *torch_generator_);
  std::vector<std::int64_t> order(static_cast<std::size_t>(size_));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  for (std::size_t i = order.size(); i > 1; --i) {
    // Lemire's multiply-shift: an unbiased-enough draw in [0, i) that is the same everywhere.
    const unsigned __int128 product = static_cast<unsigned __int128>(generator_()) * i;
    const auto j = static_cast<std::size_t>(product >> 64);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

void RandomSampler::on_exhausted() {
  if (torch_generator_) at::randperm(size_, *torch_generator_, at::kLong);
}

}  // namespace dlreset::data
