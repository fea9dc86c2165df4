// Made-up process trees for the watcher's tests: a Python program and the forks it makes, and the
// bare events of the Python hook in them.
#pragma once

#include <sys/types.h>

#include <optional>

#include "watch/hook/hook_event.h"
#include "watch/tree/process_record.h"

namespace dlreset::watch {

inline constexpr pid_t kProgram = 100;
inline constexpr const char* kProgramCmdline = "/usr/bin/python3 train.py";

/// The watched program, the tree's root: pid kProgram, started by exec.
inline ProcessRecord program() {
  ProcessRecord record;
  record.pid = kProgram;
  record.parent = 1;
  record.role = ProcessRole::root;
  record.exec_seen = true;
  record.cmdline = kProgramCmdline;
  return record;
}

/// A fork of `parent` that never ran exec, alive from `start` to `end` (none: still alive),
/// having used 0.25 s of CPU.
inline ProcessRecord fork_of(pid_t pid, double start, std::optional<double> end, pid_t parent = kProgram) {
  ProcessRecord record;
  record.pid = pid;
  record.parent = parent;
  record.start_s = start;
  record.end_s = end;
  record.cmdline = kProgramCmdline;
  record.cpu_s = 0.25;
  return record;
}

/// An event of the hook of kind `kind` at `t`, from `pid`, with no other field set: each test
/// fills in what its events carry.
inline HookEvent hook_event(HookEventKind kind, double t, pid_t pid = kProgram) {
  HookEvent event;
  event.kind = kind;
  event.pid = pid;
  event.time_s = t;
  return event;
}

}  // namespace dlreset::watch
