// Turning what a process worker put in its shared-memory slot into the main process's batch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "harness/data/core/memory/block_pool.h"
#include "harness/data/core/worker/transport/descriptor_ring.h"
#include "harness/data/core/worker/transport/protocol.h"
#include "harness/data/core/worker/transport/shared_slots.h"

namespace dlreset::data::detail {

/// The batch message a descriptor on a worker's answer ring stands for: its place in order,
/// its slot and shape; the batch itself is still in the slot (take_from_slot()).
Message batch_message(const SlotDescriptor& descriptor, int worker_id, std::int64_t pid);

/// Turns the slot a message names into its batch: the indices and labels copied out, the
/// features left in place, held by the batch's buffers and then by its tensors. A message that
/// names no slot is left alone; an error, or a batch that came inline after all, frees its slot.
/// Returns whether a batch was taken from a slot. Throws DataLoaderError naming the worker (as
/// the main process knows it: `worker_id`, `pid`, `loader`) for a slot the worker does not have
/// or a batch that does not fit its slot: a corrupt message. Allocates only the batch's index
/// list.
bool take_from_slot(SharedSlots* slots, Message& message, const std::shared_ptr<BlockPool>& index_blocks, int worker_id,
                    std::int64_t pid, const std::string& loader);

}  // namespace dlreset::data::detail
