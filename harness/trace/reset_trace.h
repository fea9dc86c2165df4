// What the watched iterator field's hook does: log the reset and, when tracing, its stack.
#pragma once

#include <string>

namespace dlreset::trace {

/// Records an `iterator_reset` event for `loader` in the global event log. With tracing on it
/// captures the caller's stack into the event and, if the trace options name a stream, prints
/// it there as a Python-style traceback. Marked noinline so the frames it drops are its own.
__attribute__((noinline)) void record_iterator_reset(const std::string& loader);

/// Frames a reset traceback leaves out: the hook machinery between the store and the capture.
extern const char* const kResetHookFrames[];

}  // namespace dlreset::trace
