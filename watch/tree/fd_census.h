// Counts a process's open descriptors by type from /proc/PID/fd: one directory read and one
// readlink a descriptor, done at a pass's start (the hook's iterator_made and iterator_reset),
// never a batch's.
#pragma once

#include <sys/types.h>

#include <optional>

#include "watch/hook/fd_counts.h"

namespace dlreset::watch {

/// `pid`'s open descriptors by type; empty where /proc/PID/fd cannot be read (the process ended,
/// or belongs to another user).
std::optional<FdCounts> count_fds(pid_t pid);

}  // namespace dlreset::watch
