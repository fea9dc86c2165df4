// Mirrors pytorch_lightning/utilities/apply_func.py @ 1.5.0: apply_to_collection.
#pragma once

#include "harness/data/data_loader.h"
#include "harness/trace/traced.h"

namespace dlreset::lightning {

/// Calls `function` on every DataLoader in `data`. Lightning walks any nesting of lists and
/// dicts down to its DataLoaders; dlreset's CombinedLoader holds one loader, so the walk is one
/// call, kept for its frame: 1.5.0's reset trace passes through it.
DLRESET_TRACED void apply_to_collection(data::DataLoader& data, void (*function)(data::DataLoader&));

}  // namespace dlreset::lightning
