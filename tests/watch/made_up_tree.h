// Made-up process trees for the watcher's tests: a Python program and the forks it makes, and the
// bare events of the Python hook in them.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "watch/analysis/generations.h"
#include "watch/analysis/watch_report.h"
#include "watch/hook/hook_event.h"
#include "watch/tree/process_record.h"
#include "watch/tree/watcher.h"

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

/// The settings of a loader of train.Squares in batches of 16 with `workers` fork workers, as
/// loader_made and iterator_made carry them.
inline LoaderSettings fork_loader(int workers, bool persistent) {
  LoaderSettings settings;
  settings.dataset = "train.Squares";
  settings.batch_size = 16;
  settings.workers = workers;
  settings.persistent = persistent;
  settings.start_method = "fork";
  return settings;
}

/// A watch that saw `records` (the program first) and the hook's `events`, and that ended with the
/// program at `end_s`; in connector mode (starts dated exactly), with the hook on.
inline WatchResult made_up_watch(std::vector<ProcessRecord> records, std::vector<HookEvent> events,
                                 double end_s = 100.0) {
  WatchResult result;
  result.mode = WatchMode::connector;
  records.front().end_s = end_s;
  result.processes = std::move(records);
  result.end_s = end_s;
  result.hook_events = std::move(events);
  result.python_hook = "on";
  result.python_hook_dir = "/usr/share/dlreset/python";
  return result;
}

/// What the watcher makes of `result` (analyse_watch): the phases of a real watch's report, in its
/// order, with the default generation window.
inline WatchReport analysed(WatchResult result) {
  return analyse_watch(std::move(result), {}, "", GenerationOptions().window_s);
}

}  // namespace dlreset::watch
