#include "harness/data/core/datasets/dataset.h"

#include "harness/data/core/datasets/dataset_registry.h"

namespace dlreset::data {

std::int64_t shape_numel(const SampleShape& shape) {
  std::int64_t numel = 1;
  for (const std::int64_t dim : shape) numel *= dim;
  return numel;
}

std::int64_t Dataset::sample_numel() const { return shape_numel(sample_shape()); }

std::unique_ptr<Dataset> make_dataset(const std::string& spec) { return DatasetRegistry::global().make(spec); }

}  // namespace dlreset::data
