// Mirrors DistributedSampler of torch/utils/data/distributed.py @ v1.13.1.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/data/core/samplers/sampler.h"

namespace dlreset::data {

/// DistributedSampler's arguments, with torch's defaults. `num_replicas` and `rank` have none
/// here: torch reads them from the process group, which the caller knows.
struct DistributedSamplerOptions {
  std::int64_t num_replicas = 1;
  std::int64_t rank = 0;
  bool shuffle = true;
  /// The same on every rank: each epoch's permutation is drawn from a generator seeded with
  /// seed + epoch, so every rank draws the same one and takes its own stride of it.
  std::uint64_t seed = 0;
  /// Drop the tail that does not divide evenly among the replicas, instead of padding it with
  /// indices from the start.
  bool drop_last = false;
};

/// One rank's shard of the dataset: with shuffling, `torch.randperm(n)` on a generator seeded
/// seed + epoch, padded (or cut) to a multiple of num_replicas, then every num_replicas-th index
/// from `rank`. The shards of one epoch are disjoint and together cover the dataset (padding
/// repeats its first indices). The order changes only with set_epoch(): a loop that does not
/// call it before each epoch's `iter()` sees the same order every epoch, as in torch.
class DistributedSampler : public Sampler {
 public:
  /// Throws DataLoaderError, naming the value and the fix, for a rank outside [0,
  /// num_replicas) or num_replicas below 1.
  DistributedSampler(std::int64_t dataset_size, DistributedSamplerOptions options);

  std::vector<std::int64_t> epoch_order() override;
  /// `num_samples`: indices this rank gets every epoch.
  std::int64_t size() const override { return num_samples_; }

  /// `set_epoch`: the next `iter()` of the loader draws this epoch's order.
  void set_epoch(std::int64_t epoch) { epoch_ = epoch; }
  /// num_samples × num_replicas: the dataset padded or cut to a multiple of the replicas.
  std::int64_t total_size() const { return num_samples_ * options_.num_replicas; }

 private:
  std::int64_t dataset_size_;
  DistributedSamplerOptions options_;
  std::int64_t num_samples_ = 0;
  std::int64_t epoch_ = 0;
};

}  // namespace dlreset::data
