#include "tests/support/probe_dataset.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "harness/data/core/datasets/dataset_registry.h"
#include "harness/data/core/errors.h"
#include "harness/data/core/worker/worker_info.h"

namespace dlreset::testing {

ProbeDataset::ProbeDataset(std::int64_t size) : size_(size) {
  // Features are floats: indices above 2^24 would no longer be exact.
  if (size_ < 0 || size_ > (std::int64_t{1} << 24)) {
    throw data::DatasetError("ProbeDataset's size must be between 0 and 2^24 (its indices travel as "
                             "floats), got " +
                             std::to_string(size_) + ".");
  }
}

std::int64_t ProbeDataset::get(std::int64_t index, float* features) {
  if (index < 0 || index >= size_) {
    throw std::out_of_range("index " + std::to_string(index) + " is out of range for a dataset of " +
                            std::to_string(size_) + " samples");
  }
  if (!loaded_) {
    loaded_ = true;
    record_load(0.0);
  }
  const data::WorkerInfo* worker = data::get_worker_info();
  features[0] = static_cast<float>(index);
  features[1] = worker != nullptr ? static_cast<float>(worker->id) : -1.0f;
  features[2] = worker != nullptr ? static_cast<float>(worker->num_workers) : 0.0f;
  return worker != nullptr ? static_cast<std::int64_t>(worker->seed) : -1;
}

std::unique_ptr<data::Dataset> ProbeDataset::clone() const {
  auto copy = std::make_unique<ProbeDataset>(*this);
  copy->reset_load_count();
  return copy;
}

std::string ProbeDataset::spec() const { return nlohmann::json{{"kind", "probe"}, {"size", size_}}.dump(); }

std::unique_ptr<ProbeDataset> ProbeDataset::from_spec(const std::string& text) {
  const nlohmann::json spec = nlohmann::json::parse(text);
  return std::make_unique<ProbeDataset>(spec.at("size").get<std::int64_t>());
}

DLRESET_REGISTER_DATASET("probe", ProbeDataset)

}  // namespace dlreset::testing
