// One report of the kernel's process events connector, reduced to what the tree needs.
#pragma once

#include <sys/types.h>

#include <optional>

namespace dlreset::watch {

struct ProcessEvent {
  enum class Kind { fork, exec, exit };
  Kind kind = Kind::fork;
  double time_s = 0.0;             ///< CLOCK_MONOTONIC, as the kernel stamped it.
  pid_t pid = 0;                   ///< The process (for a fork: the child).
  pid_t parent = 0;                ///< For a fork: the process that forked.
  std::optional<int> wait_status;  ///< For an exit: the status its parent's wait will see.
};

}  // namespace dlreset::watch
