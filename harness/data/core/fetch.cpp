// Mirrors torch/utils/data/_utils/fetch.py @ v1.13.1 (_MapDatasetFetcher), collating into a RawBatch.
#include "harness/data/core/fetch.h"

#include <cstddef>
#include <utility>

#include "harness/data/core/datasets/dataset.h"

namespace dlreset::data {

RawBatch fetch_batch(Dataset& dataset, IndexBuffer indices, BatchBlocks blocks) {
  RawBatch batch;
  batch.sample_shape = dataset.sample_shape();
  const std::int64_t numel = shape_numel(batch.sample_shape);
  batch.indices = std::move(indices);
  const std::size_t samples = batch.indices.size();
  batch.labels = LabelBuffer(samples, LabelBuffer::allocator_type(std::move(blocks.labels)));
  batch.features = FeatureBuffer(samples * static_cast<std::size_t>(numel),
                                 FeatureBuffer::allocator_type(std::move(blocks.features)));
  for (std::size_t i = 0; i < samples; ++i) {
    batch.labels[i] = dataset.get(batch.indices[i], batch.features.data() + i * numel);
  }
  return batch;
}

void fetch_batch_into(Dataset& dataset, const IndexBuffer& indices, std::int64_t* indices_out, std::int64_t* labels,
                      float* features) {
  const std::int64_t numel = dataset.sample_numel();
  for (std::size_t i = 0; i < indices.size(); ++i) {
    indices_out[i] = indices[i];
    labels[i] = dataset.get(indices[i], features + i * static_cast<std::size_t>(numel));
  }
}

}  // namespace dlreset::data
