// What the watcher learns of one process in the watched tree.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "watch/tree/death_evidence.h"

namespace dlreset::watch {

/// What a process is to the program being watched (see worker_classifier.h for the rules).
enum class ProcessRole {
  root,     ///< The watched program itself: the command run, or the process attached to.
  worker,   ///< A DataLoader worker (or any worker process started the same way).
  helper,   ///< multiprocessing's own servers: the forkserver, the resource tracker.
  program,  ///< Another training process, such as a rank started by torch.multiprocessing.spawn.
  other,    ///< Anything else: shells, compilers, nvidia-smi, a worker's own children.
};

/// How a worker started, as told by its command line and whether it ran exec.
enum class WorkerStart {
  none,           ///< Not a worker.
  fork,           ///< A forked copy of its parent that never ran exec (PyTorch's Linux default).
  spawn,          ///< A fresh interpreter started by multiprocessing's spawn.
  forkserver,     ///< Forked by multiprocessing's forkserver.
  dlreset_spawn,  ///< dlreset's own spawned worker (`--dlreset-worker`).
};

const char* to_string(ProcessRole role);
const char* to_string(WorkerStart start);

/// What the watcher reads of a Python interpreter as it starts: enough to say why the hook did
/// not load in it.
struct PythonStart {
  std::vector<std::string> argv;          ///< Its arguments, unjoined (the flags -I, -E, -S).
  bool environ_read = false;              ///< /proc/PID/environ could be read.
  bool socket_set = false;                ///< The hook's socket variable was in its environment.
  std::optional<std::string> pythonpath;  ///< Its PYTHONPATH, where set.
};

/// Whether a program name (a command's first word, or the kernel's comm) is a Python
/// interpreter's: python, python3, python3.11, /usr/bin/python3 ...
bool is_python_program(const std::string& name);

/// One process's life. Times are seconds on CLOCK_MONOTONIC.
struct ProcessRecord {
  pid_t pid = 0;
  pid_t parent = 0;
  double start_s = 0.0;
  std::optional<double> end_s;  ///< Empty while it runs (or if it outlived the watch).
  /// It ran exec after it was forked: what it runs is its own program, not a copy of its
  /// parent. In poll mode this is inferred from a command line that differs from the parent's.
  bool exec_seen = false;
  std::optional<double> exec_s;  ///< When, where it is known (the events connector tells).
  std::string cmdline;           ///< Its arguments joined by spaces, as last read.
  std::string comm;              ///< The kernel's short name, as last read.
  /// The wait status (as waitpid gives it) where it can be known: for the command the watcher
  /// runs, and for every process the events connector saw exit.
  std::optional<int> wait_status;
  double cpu_s = 0.0;              ///< User + system CPU time when it was last seen.
  bool existed_at_attach = false;  ///< It was already running when `--pid` attached.
  /// For a Python interpreter (what it ran exec into): its start, read at its exec.
  std::optional<PythonStart> python;
  /// For a worker: the loader and the iterator whose workers it is, where the Python hook named
  /// them ("812:L1", "812:I3"). Generations are then told apart by iterator, and a respawn is a
  /// loader's new set replacing its own old one, not another loader's.
  std::string loader_key;
  std::string iterator_key;
  /// For a worker whose loader the hook named: whether it was meant to outlive its pass, so that
  /// a new set of the loader's replacing it is a respawn: its loader had persistent_workers=True.
  /// A loader without them starts new workers at every iter() by design, and the hook saw that
  /// iter(). Empty where the hook did not name the loader: any replacement then counts.
  std::optional<bool> meant_to_last;
  ProcessRole role = ProcessRole::other;
  WorkerStart start = WorkerStart::none;
  /// What was last sampled of its resources before its end, and the OOM-kill counts around it:
  /// what tells a death by a signal (empty until it ends).
  DeathEvidence evidence;
};

/// "exit 0", "exit 3", "signal 9 (Killed)", or "unknown".
std::string describe_wait_status(const std::optional<int>& wait_status);

/// The shell's exit status for a wait status: the code, or 128 + the signal.
int shell_status(int wait_status);

}  // namespace dlreset::watch
