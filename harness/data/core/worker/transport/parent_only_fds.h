// The main process's descriptors and mappings that no forked worker may keep.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace dlreset::data::detail {

/// Every descriptor the main process holds for its process workers: its end of each worker's
/// channel, each worker's shared-memory slots and pidfd, in every loader at once, each pool's
/// wake-up eventfd and epoll set, the death watch's epoll set (worker_death_watch.h), and a new
/// worker's end of its channel until it is handed over. A forked worker inherits all of the
/// main process's descriptors and must keep them, as PyTorch's do: a dataset may hold a file,
/// an HDF5 or LMDB handle or a log opened before the fork. It closes only these (all but its
/// own channel), and unmaps the other workers' shared-memory slots.
///
/// One of the five pieces of process-wide mutable state (docs/design.md §4): a fork in one
/// loader must see the channels of all the others. Thread-safe.
void register_parent_only_fd(int fd);
void unregister_parent_only_fd(int fd);
/// A copy of the registered descriptors, taken before a fork: the child must not lock anything.
std::vector<int> parent_only_fds();

/// The same for the workers' shared-memory slots (shared_slots.h): a forked worker unmaps every
/// other worker's, so that it can neither touch nor keep them.
void register_parent_only_mapping(void* base, std::size_t bytes);
void unregister_parent_only_mapping(void* base);
std::vector<std::pair<void*, std::size_t>> parent_only_mappings();

}  // namespace dlreset::data::detail
