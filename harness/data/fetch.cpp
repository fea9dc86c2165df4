// Mirrors torch/utils/data/_utils/fetch.py @ v1.13.1 (_MapDatasetFetcher), collating into a RawBatch.
#include "harness/data/fetch.h"

#include "harness/data/dataset.h"

namespace dlreset::data {

RawBatch fetch_batch(Dataset& dataset, const std::vector<std::int64_t>& indices,
                     std::shared_ptr<BlockSource> features_from) {
  RawBatch batch;
  batch.sample_shape = dataset.sample_shape();
  const std::int64_t numel = shape_numel(batch.sample_shape);
  batch.indices = indices;
  batch.labels.resize(indices.size());
  batch.features = FeatureBuffer(indices.size() * static_cast<std::size_t>(numel),
                                 FeatureBuffer::allocator_type(std::move(features_from)));
  for (std::size_t i = 0; i < indices.size(); ++i) {
    batch.labels[i] = dataset.get(indices[i], batch.features.data() + i * numel);
  }
  return batch;
}

void fetch_batch_into(Dataset& dataset, const std::vector<std::int64_t>& indices,
                      std::int64_t* indices_out, std::int64_t* labels, float* features) {
  const std::int64_t numel = dataset.sample_numel();
  for (std::size_t i = 0; i < indices.size(); ++i) {
    indices_out[i] = indices[i];
    labels[i] = dataset.get(indices[i], features + i * static_cast<std::size_t>(numel));
  }
}

}  // namespace dlreset::data
