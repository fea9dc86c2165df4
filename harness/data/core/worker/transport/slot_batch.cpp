#include "harness/data/core/worker/transport/slot_batch.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "harness/data/core/datasets/dataset.h"
#include "harness/data/core/errors.h"

namespace dlreset::data::detail {

Message batch_message(const SlotDescriptor& descriptor, int worker_id, std::int64_t pid) {
  Message message;
  message.type = MessageType::batch;
  message.worker_id = worker_id;
  message.seq = descriptor.seq;
  message.send_idx = descriptor.send_idx;
  message.pid = pid;
  message.slot = descriptor.slot;
  message.slot_samples = descriptor.samples;
  message.time_s = descriptor.time_s;
  const int dims = std::clamp(descriptor.dims, 0, SlotDescriptor::kMaxDims);
  message.batch.sample_shape = SampleShape(descriptor.shape, descriptor.shape + dims);
  return message;
}

bool take_from_slot(SharedSlots* slots, Message& message, const std::shared_ptr<BlockPool>& index_blocks, int worker_id,
                    std::int64_t pid, const std::string& loader) {
  if (message.slot < 0) return false;
  const auto corrupt = [&](const std::string& what) {
    return DataLoaderError("DataLoader worker " + std::to_string(worker_id) + " (pid " + std::to_string(pid) +
                           ") of loader '" + loader + "' " + what + ": a corrupt message.");
  };
  if (slots == nullptr || message.slot >= slots->count()) {
    throw corrupt("answered with shared-memory slot " + std::to_string(message.slot) + ", which it does not have");
  }
  if (message.type != MessageType::batch || message.slot_samples < 0) {
    slots->release(message.slot);  // an error, or a batch that did not fit: inline
    return false;
  }
  const std::int64_t numel = shape_numel(message.batch.sample_shape);
  const SlotLayout layout{message.slot_samples, numel};
  const std::size_t slot_bytes = slots->slot_bytes();
  // Bounds first, so that a corrupt count cannot overflow the layout's arithmetic.
  const bool in_bounds = numel >= 0 && static_cast<std::size_t>(numel) <= slot_bytes / sizeof(float) &&
                         static_cast<std::size_t>(message.slot_samples) <= slot_bytes / (2 * sizeof(std::int64_t));
  if (!in_bounds || layout.bytes() > slot_bytes) {
    slots->release(message.slot);
    throw corrupt("described a batch of " + std::to_string(message.slot_samples) + " samples that does not fit its " +
                  std::to_string(slot_bytes) + "-byte slot");
  }
  const auto* indices = reinterpret_cast<const std::int64_t*>(slots->slot(message.slot));
  const auto samples = static_cast<std::size_t>(layout.samples);
  message.batch.indices = IndexBuffer(samples, IndexBuffer::allocator_type(index_blocks));
  std::copy(indices, indices + samples, message.batch.indices.begin());
  BatchBlocks blocks = slots->hand_over(message.slot, layout);
  const std::size_t features = samples * static_cast<std::size_t>(numel);
  if (samples > 0) message.batch.labels = LabelBuffer(samples, LabelBuffer::allocator_type(std::move(blocks.labels)));
  if (features > 0) {
    message.batch.features = FeatureBuffer(features, FeatureBuffer::allocator_type(std::move(blocks.features)));
  }
  return true;
}

}  // namespace dlreset::data::detail
