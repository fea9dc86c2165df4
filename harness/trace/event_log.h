// The process-wide event log: one of the five pieces of process-wide mutable state (docs/design.md §4).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "harness/trace/stack_trace.h"

namespace dlreset::trace {

/// What happened. Worker lifecycle kinds come from the workers themselves (over their channel)
/// or from the parent when it launches and reaps them.
enum class EventKind {
  iterator_reset,   ///< A loader's persistent iterator field went from live to null.
  worker_spawn,     ///< The parent launched a worker.
  worker_started,   ///< The worker's loop began (for `spawn`, after the program started).
  dataset_loaded,   ///< A worker (or the main process) finished loading its dataset copy.
  worker_shutdown,  ///< The parent asked a worker to exit.
  worker_exit,      ///< The parent reaped (or joined) the worker.
};

const char* to_string(EventKind kind);

/// One entry of the log. Times are seconds on the system-wide monotonic clock, so events sent
/// by worker processes line up with the parent's; `EventLog::origin_s()` makes them relative.
struct Event {
  EventKind kind = EventKind::iterator_reset;
  double time_s = 0.0;
  std::string loader;  ///< Loader name ("train", "val"); empty when not known.
  int epoch = -1;      ///< Filled from the log's context when left at -1.
  std::string phase;   ///< "fit" or "teardown"; filled from the context when empty.
  std::string stage;   ///< "sanity_check", "train", "validate"; filled from the context.
  int worker_id = -1;
  std::int64_t pid = 0;
  double duration_s = 0.0;  ///< dataset_loaded: how long the load took.
  /// iterator_reset with tracing on: the captured stack, symbolized only when printed.
  std::shared_ptr<const StackCapture> stack;
};

/// The one place a worker's event is built (spawn, start, load, shutdown, exit), whoever records
/// it: the pools, the iterator, or the report of a worker.
Event worker_event(EventKind kind, std::string loader, int worker_id, std::int64_t pid, double time_s);

/// Where the loops are, so that an event recorded deep inside a DataLoader knows its epoch.
struct EventContext {
  int epoch = -1;
  std::string phase;
  std::string stage;
};

/// How iterator resets are traced. Off by default: then a reset costs a counter increment and
/// one log entry, and no stack is captured.
struct TraceOptions {
  bool capture_stacks = false;       ///< Capture the stack at every reset.
  std::ostream* print_to = nullptr;  ///< Also print each captured stack here, Python-style.
  MirrorLookup mirror;               ///< Names the upstream file of each printed frame.
  SourceLookup source;               ///< Shows each printed frame's source line.
};

/// Thread-safe, append-only log of events. A process has one (`global()`); tests clear it.
class EventLog {
 public:
  EventLog();
  static EventLog& global();

  /// Fills epoch, phase and stage from the context where the event leaves them unset.
  void record(Event event);
  std::vector<Event> events() const;
  /// Drops every event and restarts the origin at now. Context and trace options stay.
  void clear();

  void set_context(EventContext context);
  EventContext context() const;

  /// Tracing starts from `DLRESET_TRACE_RESETS=1` in the environment (stacks captured and
  /// printed to stderr); `set_trace_options` overrides that.
  void set_trace_options(const TraceOptions& options);
  TraceOptions trace_options() const;

  /// The monotonic time at which the log started (or was last cleared), in seconds.
  double origin_s() const;

 private:
  mutable std::mutex mutex_;
  std::vector<Event> events_;
  EventContext context_;
  TraceOptions trace_;
  double origin_s_;
};

/// Seconds on CLOCK_MONOTONIC, which every process on the machine shares: the clock of every
/// event, and of the watcher's records.
double monotonic_now_s();

}  // namespace dlreset::trace
