#include "harness/trace/event_log.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <utility>

#include "harness/sys/clock.h"

namespace dlreset::trace {

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::iterator_reset: return "iterator_reset";
    case EventKind::worker_spawn: return "spawn";
    case EventKind::worker_started: return "started";
    case EventKind::dataset_loaded: return "dataset_loaded";
    case EventKind::worker_shutdown: return "shutdown";
    case EventKind::worker_exit: return "exit";
  }
  return "unknown";
}

Event worker_event(EventKind kind, std::string loader, int worker_id, std::int64_t pid, double time_s) {
  Event event;
  event.kind = kind;
  event.time_s = time_s;
  event.loader = std::move(loader);
  event.worker_id = worker_id;
  event.pid = pid;
  return event;
}

double monotonic_now_s() { return sys::monotonic_s(); }

namespace {
TraceOptions trace_options_from_environment() {
  const char* value = std::getenv("DLRESET_TRACE_RESETS");
  TraceOptions options;
  if (value != nullptr && std::strcmp(value, "") != 0 && std::strcmp(value, "0") != 0) {
    options.capture_stacks = true;
    options.print_to = &std::cerr;
  }
  return options;
}
}  // namespace

EventLog::EventLog() : trace_(trace_options_from_environment()), origin_s_(monotonic_now_s()) {}

EventLog& EventLog::global() {
  // A function-local static: constructed on first use, so a spawned worker that never logs
  // never builds it, and no static-initialization order matters.
  static EventLog log;
  return log;
}

void EventLog::record(Event event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (event.epoch < 0) event.epoch = context_.epoch;
  if (event.phase.empty()) event.phase = context_.phase;
  if (event.stage.empty()) event.stage = context_.stage;
  events_.push_back(std::move(event));
}

std::vector<Event> EventLog::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

void EventLog::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.clear();
  origin_s_ = monotonic_now_s();
}

void EventLog::set_context(EventContext context) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_ = std::move(context);
}

EventContext EventLog::context() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return context_;
}

void EventLog::set_trace_options(const TraceOptions& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  trace_ = options;
}

TraceOptions EventLog::trace_options() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return trace_;
}

double EventLog::origin_s() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return origin_s_;
}

}  // namespace dlreset::trace
