// A dataset whose samples say which worker made them, for tests that compare with torch's.
// Registered as kind "probe", so that spawned workers rebuild it too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "harness/data/core/datasets/dataset.h"

namespace dlreset::testing {

/// Sample i has features {i, worker id, num_workers} and, as its label, the worker's seed: the
/// three get_worker_info() fields torch's tests check, carried out with the batch. In the main
/// process (0 workers) the id and seed are -1 and num_workers 0. It loads lazily, once per
/// object, like every dataset here, so loads count as they do for the bug's datasets.
class ProbeDataset : public data::Dataset {
 public:
  explicit ProbeDataset(std::int64_t size);

  std::int64_t size() const override { return size_; }
  data::SampleShape sample_shape() const override { return {3}; }
  std::int64_t get(std::int64_t index, float* features) override;
  std::unique_ptr<data::Dataset> clone() const override;
  std::string spec() const override;

  /// Rebuilds from the JSON that `spec()` writes.
  static std::unique_ptr<ProbeDataset> from_spec(const std::string& spec);

 private:
  std::int64_t size_;
  bool loaded_ = false;
};

}  // namespace dlreset::testing
