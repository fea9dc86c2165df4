#include "harness/data/dataset.h"

#include <nlohmann/json.hpp>

#include "harness/data/errors.h"
#include "harness/data/idx_dataset.h"
#include "harness/data/probe_dataset.h"
#include "harness/data/synthetic_dataset.h"

namespace dlreset::data {

std::int64_t Dataset::sample_numel() const {
  std::int64_t numel = 1;
  for (const std::int64_t dim : sample_shape()) numel *= dim;
  return numel;
}

std::unique_ptr<Dataset> make_dataset(const std::string& text) {
  nlohmann::json spec;
  try {
    spec = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw DatasetError(std::string("A dataset spec is not valid JSON (") + e.what() + "): " + text);
  }
  const std::string kind = spec.value("kind", "");
  if (kind == "idx") {
    IdxDatasetOptions options;
    options.images_path = spec.at("images").get<std::string>();
    options.labels_path = spec.at("labels").get<std::string>();
    options.mean = spec.at("mean").get<float>();
    options.std = spec.at("std").get<float>();
    return std::make_unique<IdxDataset>(std::move(options));
  }
  if (kind == "synthetic") return SyntheticDataset::from_spec(text);
  if (kind == "probe") return ProbeDataset::from_spec(text);
  throw DatasetError("Unknown dataset kind '" + kind +
                     "' in a dataset spec; make_dataset knows 'idx', 'synthetic' and 'probe'. A dataset "
                     "used with start_method 'spawn' must be one of them.");
}

}  // namespace dlreset::data
