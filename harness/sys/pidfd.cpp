#include "harness/sys/pidfd.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace dlreset::sys {

// Through syscall(): Debian 12's <sys/pidfd.h> declares pidfd_open without C linkage.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace dlreset::sys
