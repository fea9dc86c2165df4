// Turns a worker's RawBatch into tensors, in the main process.
#pragma once

#include "harness/data/batch.h"
#include "harness/data/raw_batch.h"

namespace dlreset::data {

/// Builds the batch's tensors. They adopt the batch's buffers, so nothing is copied, and a
/// buffer from a block source (a FeatureBufferPool, or a worker's shared-memory slot) goes
/// back to it when its tensor dies. With `pin_memory` and
/// a CUDA device present, the tensors are copied into page-locked memory so that copies to the
/// GPU can be asynchronous; without a device it has no effect, as in PyTorch.
Batch collate(RawBatch&& raw, bool pin_memory);

/// Whether pinning is possible here (a CUDA device is present).
bool can_pin_memory();

}  // namespace dlreset::data
