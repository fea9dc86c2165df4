// Mirrors the map-style Dataset of torch/utils/data/dataset.py @ v1.13.1: size and get a sample.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "harness/data/core/datasets/sample_shape.h"

namespace dlreset::data {

/// Floats in one sample of `shape`: the product of its sizes (1 for a scalar's empty shape).
std::int64_t shape_numel(const SampleShape& shape);

/// A map-style dataset whose samples are float features and an integer label.
///
/// Datasets here load *lazily*: construction only checks that the data is there (and learns
/// its size); the first `get` in a process or worker does the real load. That is how the bug's
/// reporter's dataset behaved, and why every re-spawned worker paid the load again.
///
/// A dataset object is used by one thread at a time: each worker works on its own copy
/// (`clone()`), as each PyTorch worker process works on its own copy.
class Dataset {
 public:
  virtual ~Dataset() = default;

  /// Number of samples (`__len__`).
  virtual std::int64_t size() const = 0;
  /// Shape of one sample's features.
  virtual SampleShape sample_shape() const = 0;
  /// Writes sample `index`'s features (`sample_numel()` floats) to `features` and returns its
  /// label (`__getitem__`). Loads the data first if this object has not loaded it yet.
  virtual std::int64_t get(std::int64_t index, float* features) = 0;
  /// A copy of this object as it is now, as a forked worker would inherit it: loaded data is
  /// shared (it is immutable), an unloaded copy stays unloaded and will load on first use.
  virtual std::unique_ptr<Dataset> clone() const = 0;
  /// A JSON description from which `make_dataset` rebuilds the dataset in a spawned worker,
  /// the way Python pickles a dataset for a spawned worker. Loaded data is not part of it.
  virtual std::string spec() const = 0;

  /// How many times this object loaded its data.
  std::int64_t loads() const { return loads_; }
  /// Wall time of the last load, in seconds.
  double last_load_seconds() const { return last_load_seconds_; }

  std::int64_t sample_numel() const;

 protected:
  /// Called by implementations once a load has finished.
  void record_load(double seconds) {
    ++loads_;
    last_load_seconds_ = seconds;
  }
  /// For `clone()`: a copy is a new object that has loaded nothing itself.
  void reset_load_count() {
    loads_ = 0;
    last_load_seconds_ = 0.0;
  }

 private:
  std::int64_t loads_ = 0;
  double last_load_seconds_ = 0.0;
};

/// Rebuilds a dataset from `Dataset::spec()`, by the factory registered for its kind
/// (DatasetRegistry). Throws DatasetError for an unknown kind.
std::unique_ptr<Dataset> make_dataset(const std::string& spec);

}  // namespace dlreset::data
