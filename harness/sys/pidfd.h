// A descriptor for a process (pidfd_open(2)): it becomes readable when the process exits, so an
// epoll set can wait for exits and for data at once, and it names the process, not a pid that
// the kernel may hand to another after the process is reaped.
#pragma once

#include <sys/types.h>

namespace dlreset::sys {

/// pidfd_open(2), close-on-exec as every pidfd is; -1 with errno set where the kernel lacks it
/// (before Linux 5.3) or the process is gone.
int open_pidfd(pid_t pid);

}  // namespace dlreset::sys
