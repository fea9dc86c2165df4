// What the watched iterator field's hook does: log the reset and, when tracing, its stack.
#pragma once

#include <string>

#include "harness/trace/event_log.h"
#include "harness/trace/stack_trace.h"

namespace dlreset::trace {

/// Records an `iterator_reset` event for `loader` in the global event log and returns it, with
/// the log's epoch, phase and stage filled in. With tracing on, or `capture_stack`, it captures
/// the caller's stack into the event; with tracing on and a stream in the trace options, it
/// prints it there as a Python-style traceback. Marked noinline so the frames it drops are its
/// own.
__attribute__((noinline)) Event record_iterator_reset(const std::string& loader, bool capture_stack = false);

/// Frames a reset traceback leaves out: the hook machinery between the store and the capture.
extern const char* const kResetHookFrames[];

/// How a reset's traceback is printed: titled with its loader, epoch, phase and stage, without
/// the hook's frames, and with the lookups of `trace` (the log's trace options).
TracebackOptions reset_traceback_options(const Event& reset, const TraceOptions& trace);

}  // namespace dlreset::trace
