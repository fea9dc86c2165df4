// Turns a worker's RawBatch into tensors, in the main process.
#pragma once

#include <functional>

#include "harness/data/batch.h"
#include "harness/data/core/memory/raw_batch.h"

namespace dlreset::data {

/// Builds the batch's tensors. They adopt the batch's buffers, so nothing is copied, and a
/// buffer from a block source (a BlockPool, or a worker's shared-memory slot) goes
/// back to it when its tensor dies. With `pin_memory` and
/// a CUDA device present, the tensors are copied into page-locked memory so that copies to the
/// GPU can be asynchronous; without a device it has no effect, as in PyTorch.
Batch collate(RawBatch&& raw, bool pin_memory);

/// Whether pinning is possible here (a CUDA device is present).
bool can_pin_memory();

/// Copies a batch into page-locked memory: PyTorch's `pin_memory(data, device)` for a batch.
using PinMemoryFunction = std::function<Batch(RawBatch&&)>;

/// How a loader's batches are pinned, or empty where they are not. PyTorch 1.13 pins when
/// `pin_memory and torch.cuda.is_available()`, or, given a `pin_memory_device`, whenever
/// `pin_memory` is set; dlreset's counterpart of that device is `custom`
/// (DataLoader::set_pin_memory_function), which pins even without CUDA.
PinMemoryFunction pin_memory_function(bool pin_memory, const PinMemoryFunction& custom);

}  // namespace dlreset::data
