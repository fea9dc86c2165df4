// A generated dataset with a tunable load cost and a marker that shows whether a worker kept its
// own copy, for tests and benchmarks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "harness/data/core/datasets/dataset.h"

namespace dlreset::data {

struct SyntheticDatasetOptions {
  std::int64_t size = 64;
  SampleShape sample_shape = {1, 4, 4};  ///< At least 2 features: index and marker.
  std::int64_t num_classes = 10;
  /// Written into every sample's second feature. The main process may change it between
  /// epochs (`set_marker`): a worker that kept its own copy of the dataset keeps reporting the
  /// old value, a re-created worker reports the new one (PyTorch's test_dataset_not_reset).
  double marker = 0.0;
  /// Pseudo-random numbers generated and summed by each load: real, tunable work that stands
  /// for reading and decoding a dataset, never a sleep.
  std::int64_t load_work = 0;
};

/// Sample i has features {i, marker, f(i, 2), f(i, 3), ...} and label i % num_classes.
class SyntheticDataset : public Dataset {
 public:
  explicit SyntheticDataset(SyntheticDatasetOptions options);

  std::int64_t size() const override { return options_.size; }
  SampleShape sample_shape() const override { return options_.sample_shape; }
  std::int64_t get(std::int64_t index, float* features) override;
  std::unique_ptr<Dataset> clone() const override;
  std::string spec() const override;

  void set_marker(double marker) { options_.marker = marker; }
  const SyntheticDatasetOptions& options() const { return options_; }
  bool loaded() const { return loaded_; }

  /// Rebuilds from the JSON `text` that `spec()` writes.
  static std::unique_ptr<SyntheticDataset> from_spec(const std::string& text);

 private:
  void load();

  SyntheticDatasetOptions options_;
  bool loaded_ = false;
  /// The load's result, kept so the work cannot be optimized away.
  double load_checksum_ = 0.0;
};

}  // namespace dlreset::data
