// The main process's descriptors that no forked worker may keep.
#pragma once

#include <vector>

namespace dlreset::data {

/// Every descriptor the main process holds for its process workers: its end of each worker's
/// channel, in every loader at once, and a new worker's end until it is handed over. A forked
/// worker inherits all of the main process's descriptors and must keep them, as PyTorch's do: a
/// dataset may hold a file, an HDF5 or LMDB handle or a log opened before the fork. It closes
/// only these (all but its own channel): a sibling's channel held open in a worker would hide
/// that sibling's death from the main process.
///
/// The one piece of process-wide mutable state of the worker layer (docs/design.md §4): a fork
/// in one loader must see the channels of all the others. Thread-safe.
void register_parent_only_fd(int fd);
void unregister_parent_only_fd(int fd);
/// A copy of the registered descriptors, taken before a fork: the child must not lock anything.
std::vector<int> parent_only_fds();

}  // namespace dlreset::data
