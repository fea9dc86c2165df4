// Mirrors DistributedSampler of torch/utils/data/distributed.py @ v1.13.1. In the torch layer,
// as its shuffle draws with LibTorch's randperm.
#include "harness/data/distributed_sampler.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cstddef>
#include <numeric>
#include <string>
#include <vector>

#include "harness/data/core/errors.h"
#include "harness/data/random_sampler.h"

namespace dlreset::data {

namespace {

/// Python's math.ceil(a / b) for a >= 0, b > 0.
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

DistributedSampler::DistributedSampler(std::int64_t dataset_size, DistributedSamplerOptions options)
    : dataset_size_(dataset_size), options_(options) {
  if (options_.num_replicas < 1) {
    throw DataLoaderError("DistributedSampler: num_replicas should be the number of ranks, at least 1, "
                          "but got num_replicas=" +
                          std::to_string(options_.num_replicas) + "; pass the world size.");
  }
  if (options_.rank < 0 || options_.rank >= options_.num_replicas) {
    // Torch's words, then the fix.
    throw DataLoaderError("Invalid rank " + std::to_string(options_.rank) + ", rank should be in the interval [0, " +
                          std::to_string(options_.num_replicas - 1) +
                          "]; pass this process's rank in the job of num_replicas ranks.");
  }
  const std::int64_t replicas = options_.num_replicas;
  if (options_.drop_last && dataset_size_ % replicas != 0) {
    // math.ceil((len(dataset) - num_replicas) / num_replicas); a dataset smaller than the
    // replicas gives 0, where Python's ceil of a negative quotient rounds toward zero too.
    num_samples_ = dataset_size_ > replicas ? ceil_div(dataset_size_ - replicas, replicas) : 0;
  } else {
    num_samples_ = ceil_div(dataset_size_, replicas);
  }
}

std::vector<std::int64_t> DistributedSampler::epoch_order() {
  std::vector<std::int64_t> indices;
  if (options_.shuffle) {
    // g = torch.Generator(); g.manual_seed(self.seed + self.epoch)
    at::Generator generator = at::detail::createCPUGenerator(options_.seed + static_cast<std::uint64_t>(epoch_));
    indices = torch_randperm(dataset_size_, generator);
  } else {
    indices.resize(static_cast<std::size_t>(dataset_size_));
    std::iota(indices.begin(), indices.end(), std::int64_t{0});
  }
  const auto total = static_cast<std::size_t>(total_size());
  if (!options_.drop_last) {
    // Pad with indices from the start, repeating the whole list as often as it takes.
    const std::size_t original = indices.size();
    for (std::size_t i = 0; indices.size() < total && original > 0; ++i) {
      const std::int64_t repeated = indices[i % original];
      indices.push_back(repeated);
    }
  } else {
    indices.resize(total);
  }
  std::vector<std::int64_t> shard;
  shard.reserve(static_cast<std::size_t>(num_samples_));
  for (std::size_t i = static_cast<std::size_t>(options_.rank); i < total;
       i += static_cast<std::size_t>(options_.num_replicas)) {
    shard.push_back(indices[i]);
  }
  return shard;
}

}  // namespace dlreset::data
