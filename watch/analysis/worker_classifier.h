// Which processes of a watched tree are DataLoader workers, told from the outside: from how each
// started (a fork that never ran exec, or an exec) and from its command line.
#pragma once

#include <string>
#include <vector>

#include "watch/tree/process_record.h"

namespace dlreset::watch {

/// What a command line says a process is, before its place in the tree is considered.
enum class CommandKind {
  plain,           ///< Nothing known.
  spawn_worker,    ///< multiprocessing.spawn's child (`spawn_main`, `--multiprocessing-fork`).
  forkserver,      ///< multiprocessing.forkserver's server.
  mp_helper,       ///< multiprocessing's resource or semaphore tracker.
  dlreset_worker,  ///< dlreset's spawned worker (`--dlreset-worker`).
};

CommandKind classify_command(const std::string& cmdline);

/// Sets `role` and `start` of every record. The rules, in order:
/// - the root is the root;
/// - a process that ran exec is told by its command line: a spawn or dlreset worker is a
///   worker, the forkserver and the trackers are helpers, anything else is `other`;
/// - a fork that never ran exec is a copy of its parent: a worker of it (PyTorch's fork start
///   method), or a forkserver worker if the forkserver forked it; but a fork worker's own fork,
///   a tracker's, or a shell's (a subshell of a wrapper script) is `other`. What the parent was
///   is read from the fork's own record, its image at the fork: a shell that forked a subshell
///   and later ran exec into python forked it as a shell;
/// - a process other than the root that forked workers is a training process (`program`): a
///   program the root ran through a shell, or a rank torch.multiprocessing.spawn started.
void classify_processes(std::vector<ProcessRecord>& records);

}  // namespace dlreset::watch
