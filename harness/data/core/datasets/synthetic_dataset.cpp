#include "harness/data/core/datasets/synthetic_dataset.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>
#include <vector>

#include "harness/data/core/datasets/dataset_registry.h"
#include "harness/data/core/datasets/options_spec.h"
#include "harness/data/core/errors.h"
#include "harness/data/core/splitmix64.h"

namespace dlreset::data {

SyntheticDataset::SyntheticDataset(SyntheticDatasetOptions options) : options_(std::move(options)) {
  if (options_.size < 0) {
    throw DatasetError("SyntheticDataset's size must not be negative, got " + std::to_string(options_.size) + ".");
  }
  if (sample_numel() < 2) {
    throw DatasetError("SyntheticDataset's samples need at least 2 features (index and marker); "
                       "give sample_shape more elements.");
  }
  if (options_.num_classes <= 0) {
    throw DatasetError("SyntheticDataset's num_classes must be positive, got " + std::to_string(options_.num_classes) +
                       ".");
  }
}

void SyntheticDataset::load() {
  if (loaded_) return;
  const auto start = std::chrono::steady_clock::now();
  double sum = 0.0;
  for (std::int64_t i = 0; i < options_.load_work; ++i) {
    sum += static_cast<double>(splitmix64(static_cast<std::uint64_t>(i)) >> 11) * 0x1.0p-53;
  }
  load_checksum_ = sum;
  loaded_ = true;
  record_load(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

std::int64_t SyntheticDataset::get(std::int64_t index, float* features) {
  if (index < 0 || index >= options_.size) {
    throw std::out_of_range("index " + std::to_string(index) + " is out of range for a dataset of " +
                            std::to_string(options_.size) + " samples");
  }
  load();
  // From the options, not sample_numel(): that builds the shape, one allocation a sample.
  const std::int64_t numel = shape_numel(options_.sample_shape);
  features[0] = static_cast<float>(index);
  features[1] = static_cast<float>(options_.marker);
  for (std::int64_t j = 2; j < numel; ++j) {
    const std::uint64_t bits = splitmix64(static_cast<std::uint64_t>(index) * 1315423911u + j);
    features[j] = static_cast<float>(bits >> 40) * 0x1.0p-24f;
  }
  return index % options_.num_classes;
}

std::unique_ptr<Dataset> SyntheticDataset::clone() const {
  auto copy = std::make_unique<SyntheticDataset>(*this);
  copy->reset_load_count();
  return copy;
}

// The spec is the options as JSON, field by field: a field added to the options reaches a
// spawned worker without more code. Static, not in the anonymous namespace: nlohmann finds them
// by argument-dependent lookup, in SampleShape's own namespace.
static void to_json(nlohmann::json& json, const SampleShape& shape) { json = shape.to_vector(); }
static void from_json(const nlohmann::json& json, SampleShape& shape) {
  shape = SampleShape(json.get<std::vector<std::int64_t>>());
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SyntheticDatasetOptions, size, sample_shape, num_classes, marker, load_work)

std::string SyntheticDataset::spec() const { return detail::options_spec("synthetic", options_); }

std::unique_ptr<SyntheticDataset> SyntheticDataset::from_spec(const std::string& text) {
  return std::make_unique<SyntheticDataset>(detail::options_from_spec<SyntheticDatasetOptions>(text));
}

DLRESET_REGISTER_DATASET("synthetic", SyntheticDataset)

}  // namespace dlreset::data
