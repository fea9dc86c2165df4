#include "harness/data/collate.h"

#include <ATen/Context.h>
#include <ATen/ops/empty.h>

#include <cstring>

namespace dlreset::data {

bool can_pin_memory() { return at::hasCUDA(); }

Batch collate(RawBatch&& raw, bool pin_memory) {
  const bool pin = pin_memory && can_pin_memory();
  std::vector<std::int64_t> input_shape = {raw.size()};
  input_shape.insert(input_shape.end(), raw.sample_shape.begin(), raw.sample_shape.end());
  Batch batch;
  batch.inputs = at::empty(input_shape, at::TensorOptions().dtype(at::kFloat).pinned_memory(pin));
  batch.targets = at::empty({raw.size()}, at::TensorOptions().dtype(at::kLong).pinned_memory(pin));
  std::memcpy(batch.inputs.data_ptr<float>(), raw.features.data(),
              raw.features.size() * sizeof(float));
  std::memcpy(batch.targets.data_ptr<std::int64_t>(), raw.labels.data(),
              raw.labels.size() * sizeof(std::int64_t));
  batch.indices = std::move(raw.indices);
  return batch;
}

}  // namespace dlreset::data
