// The fall-back when the events connector cannot be used: looks at /proc every interval for
// processes created since the last look whose parent is in the tree. Exits need no look: every
// member's pidfd turns readable when it exits (see ProcessTree).
#pragma once

#include <sys/types.h>

#include "harness/sys/unique_fd.h"
#include "watch/tree/process_tree.h"

namespace dlreset::watch {

class ProcPoller {
 public:
  ProcPoller();

  /// One look. /proc/loadavg names the newest pid on the machine, so a look where nothing was
  /// created costs one small read; otherwise only the new pids are read, or, when too many were
  /// created to read one by one or the pids wrapped around, all of /proc. Returns the number of
  /// /proc entries read, for the overhead figures.
  int look(ProcessTree& tree, double now_s);

 private:
  sys::UniqueFd loadavg_fd_;
  pid_t last_pid_ = 0;
  double last_look_s_ = 0.0;
};

}  // namespace dlreset::watch
