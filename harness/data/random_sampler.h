// Mirrors RandomSampler of torch/utils/data/sampler.py @ v1.13.1.
#pragma once

#include <ATen/core/Generator.h>

#include <cstdint>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "harness/data/core/samplers/sampler.h"

namespace dlreset::data {

/// `torch.randperm(n, generator=generator).tolist()`: the permutation torch draws from the same
/// generator state, as a vector. RandomSampler's torch seed mode and DistributedSampler draw
/// with it.
std::vector<std::int64_t> torch_randperm(std::int64_t n, at::Generator& generator);

/// A new permutation every epoch, drawn from one generator seeded once: the same seed gives the
/// same sequence of epochs, and no two epochs are alike.
class RandomSampler : public Sampler {
 public:
  /// SeedMode::stable: dlreset's own generator, which nothing else draws from.
  RandomSampler(std::int64_t size, std::uint64_t seed) : size_(size), generator_(seed) {}
  /// SeedMode::torch: `torch.randperm(n, generator=generator)` each epoch, on the loader's
  /// generator, which the loader's iterators draw their base seeds from too.
  // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): this mode draws from torch_generator_ alone; generator_ is unused.
  RandomSampler(std::int64_t size, at::Generator torch_generator)
      : size_(size), torch_generator_(std::move(torch_generator)) {}
  std::vector<std::int64_t> epoch_order() override;
  void on_exhausted() override;
  std::int64_t size() const override { return size_; }

 private:
  std::int64_t size_;
  /// mt19937_64 and our own Fisher-Yates (not std::shuffle, whose algorithm the standard leaves
  /// open), so an order is the same on every build.
  std::mt19937_64 generator_;
  std::optional<at::Generator> torch_generator_;
};

}  // namespace dlreset::data
