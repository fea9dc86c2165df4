#include "harness/trace/reset_trace.h"

#include <ostream>

#include "harness/trace/event_log.h"
#include "harness/trace/stack_trace.h"

namespace dlreset::trace {

const char* const kResetHookFrames[] = {"dlreset::trace::record_iterator_reset",
                                        "dlreset::trace::Watched<", "on_iterator_nulled", nullptr};

void record_iterator_reset(const std::string& loader) {
  EventLog& log = EventLog::global();
  const TraceOptions options = log.trace_options();
  Event event;
  event.kind = EventKind::iterator_reset;
  event.time_s = monotonic_now_s();
  event.loader = loader;
  if (options.capture_stacks) event.stack = StackCapture::capture();
  if (event.stack && options.print_to != nullptr) {
    const EventContext context = log.context();
    TracebackOptions format;
    format.title = "iterator of loader '" + loader + "' set to null (epoch " +
                   std::to_string(context.epoch) + ", " +
                   (context.phase.empty() ? std::string("no phase") : context.phase) +
                   (context.stage.empty() ? std::string() : ", " + context.stage) + ")";
    for (const char* const* frame = kResetHookFrames; *frame != nullptr; ++frame) {
      format.drop_innermost.emplace_back(*frame);
    }
    format.mirror = options.mirror;
    format.source = options.source;
    *options.print_to << format_traceback(event.stack->frames(), format) << std::flush;
  }
  log.record(std::move(event));
}

}  // namespace dlreset::trace
