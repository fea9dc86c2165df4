// Starting a child process with fork and exec. Everything the child needs is built before the
// fork: between fork and exec a child of a process that runs threads may make only
// async-signal-safe calls, so it cannot allocate.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace dlreset::sys {

/// The NULL-terminated pointers execve(2) takes for argv or envp, into `strings`, which must
/// outlive them and not change.
std::vector<char*> exec_pointers(std::vector<std::string>& strings);

/// This process's environment with each "NAME=value" of `overrides` in place of the entry of
/// the same name. The overrides come last; an entry of a name already there is left out, since
/// getenv(3) would find the first and never see the override.
std::vector<std::string> environment_with(const std::vector<std::string>& overrides);

/// In a child between fork and exec: asks the kernel to send `signal` when the thread that
/// forked it exits (PR_SET_PDEATHSIG, which survives execve of a program without set-user-ID),
/// then tells whether that parent is still `parent`. False means the parent died before the
/// request took hold and the child should _exit at once. Async-signal-safe.
bool die_with_parent(int signal, pid_t parent);

}  // namespace dlreset::sys
