// `dlreset watch`: runs a command, or attaches to a running process, and follows its whole
// process tree until it ends, recording every descendant's life.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "watch/hook/hook_event.h"
#include "watch/tree/hang_watch.h"
#include "watch/tree/memory_use.h"
#include "watch/tree/process_record.h"
#include "watch/tree/watch_error.h"

namespace dlreset::watch {

/// How the tree is followed.
enum class WatchMode {
  automatic,  ///< The events connector where it can be opened, else polling.
  connector,  ///< The kernel's process events connector only (root); an error if unusable.
  poll,       ///< Look at /proc every `poll_ms`.
};

struct WatchOptions {
  std::vector<std::string> command;  ///< Run this (argv); or, when empty,
  pid_t attach_pid = 0;              ///< attach to this running process.
  WatchMode mode = WatchMode::automatic;
  int poll_ms = 5;  ///< Poll mode: how often /proc is looked at.
  /// How often every member's CPU time is read (and, in poll mode, a young fork's command line,
  /// to see an exec). Each member is read once more as it exits.
  double sample_interval_s = 0.05;
  /// --memory-interval: how often each member's smaps_rollup is read (memory_sampler.h); 0: never.
  double memory_interval_s = 1.0;
  /// Lines of the program's stdout or stderr that mark the start of an epoch; with it, both
  /// streams pass through the watcher (unchanged) instead of going straight to the terminal.
  std::optional<std::regex> epoch_regex;
  /// The folder of the Python hook (find_hook_dir()); empty: no hook. Only a command the watcher
  /// runs gets it: a process attached to has started already.
  std::string python_hook_dir;
  /// --hang-timeout: a program that makes no progress for this long is hung (hang_watch.h); 0:
  /// no hang watch.
  double hang_timeout_s = 0.0;
  /// --on-hang stop: a hung program is ended, after its stacks were read; otherwise the watch
  /// reports it and goes on.
  bool stop_on_hang = true;
  /// Called once a hang's stacks were read, before the program is stopped: where the command
  /// line reports it as it happens.
  std::function<void(const HangRecord& hang)> on_hang;
  /// Called with each hook event as it arrives: where the command line prints a reset's
  /// traceback when it happens.
  std::function<void(const HookEvent& event)> on_hook_event;
  /// Called once the watch is set up (the command started, or the process attached to), before
  /// the first event, with the mode used and the time the watch counts from: where the command
  /// line prints that it is attached.
  std::function<void(pid_t root, WatchMode mode, double origin_s)> on_ready;
  /// Called after each sample with every record so far and the epoch marks: where the command
  /// line reports respawns as they happen, not only at the end of a long run.
  std::function<void(const std::vector<ProcessRecord>& records, const std::vector<double>& epoch_marks_s, double now_s)>
      on_sample;
};

struct WatchResult {
  std::vector<ProcessRecord> processes;  ///< Every process seen, root first.
  pid_t root = 0;
  bool attached = false;             ///< `--pid`, rather than a command the watcher ran.
  WatchMode mode = WatchMode::poll;  ///< The mode used (never automatic).
  std::string mode_reason;           ///< Why polling was used, when it was.
  int poll_ms = 0;
  double origin_s = 0.0;              ///< When the watch began (CLOCK_MONOTONIC).
  double end_s = 0.0;                 ///< When it ended.
  std::vector<double> epoch_marks_s;  ///< Each line that matched the epoch pattern.
  std::optional<int> root_wait_status;
  /// The signal (SIGINT, SIGTERM) that stopped the watch of a process attached to, or that was
  /// passed on to the command; 0 if none.
  int signal_received = 0;
  int events_lost = 0;         ///< Connector reports the kernel dropped (each caused a rescan).
  double watcher_cpu_s = 0.0;  ///< The watcher's own CPU time.
  /// The Python hook: "on", or why it was off ("--no-python-trace", "attached to a running
  /// process", a socket that could not be opened).
  std::string python_hook = "off";
  std::string python_hook_dir;         ///< The hook's folder, put first on PYTHONPATH.
  std::string python_hook_socket;      ///< The socket's path, while the watch ran.
  std::vector<HookEvent> hook_events;  ///< In the order received.
  int hook_malformed = 0;              ///< Datagrams on the socket that were not hook events.
  double hang_timeout_s = 0.0;         ///< --hang-timeout; 0: none.
  std::vector<HangRecord> hangs;       ///< Every hang seen, in order.
  std::optional<double> hang_stop_s;   ///< When the watcher began to end a hung program.
  MemoryRecord memory;                 ///< Every memory sample (--memory-interval).
};

/// Watches until the root exits (or, attached, until SIGINT/SIGTERM). SIGINT and SIGTERM sent
/// to the watcher are passed on to a command it runs, which decides when to stop; the command
/// gets SIGTERM if the watcher dies (PR_SET_PDEATHSIG). Throws WatchError when it cannot start.
WatchResult run_watch(const WatchOptions& options);

const char* to_string(WatchMode mode);

}  // namespace dlreset::watch
