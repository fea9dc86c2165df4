// A batch as the training loop sees it: tensors.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "harness/data/core/memory/raw_batch.h"

namespace dlreset::data {

/// PyTorch's default_collate of (image, label) pairs, plus the dataset indices so that tests
/// and `dlreset run` can check which samples an epoch saw, and in which order.
struct Batch {
  at::Tensor inputs;   ///< float32, batch × sample_shape
  at::Tensor targets;  ///< int64, batch
  /// In a block of the loader's pool, which takes it back when the batch dies; a batch kept
  /// for good only makes the pool take a new block.
  IndexBuffer indices;

  std::int64_t size() const { return static_cast<std::int64_t>(indices.size()); }
};

}  // namespace dlreset::data
