// A collated batch in plain host memory.
#pragma once

#include <cstdint>
#include <vector>

namespace dlreset::data {

/// What a worker sends back: no LibTorch inside, so forked workers never run a LibTorch op
/// (DESIGN §5); the parent turns it into tensors (collate.h).
struct RawBatch {
  std::vector<std::int64_t> indices;       ///< Dataset indices, in batch order.
  std::vector<std::int64_t> labels;        ///< One label per sample.
  std::vector<float> features;             ///< indices.size() samples, each sample_numel floats.
  std::vector<std::int64_t> sample_shape;  ///< Shape of one sample's features, e.g. {1, 28, 28}.

  std::int64_t size() const { return static_cast<std::int64_t>(indices.size()); }
};

}  // namespace dlreset::data
