#include "harness/trace/reset_trace.h"

#include <ostream>

namespace dlreset::trace {

const char* const kResetHookFrames[] = {"dlreset::trace::record_iterator_reset", "dlreset::trace::Watched<",
                                        "on_iterator_nulled", nullptr};

TracebackOptions reset_traceback_options(const Event& reset, const TraceOptions& trace) {
  TracebackOptions format;
  // A loop that is not Lightning's sets no context: say only what is known.
  std::string where = reset.epoch >= 0 ? "epoch " + std::to_string(reset.epoch) : "";
  for (const std::string* part : {&reset.phase, &reset.stage}) {
    if (!part->empty()) where += (where.empty() ? "" : ", ") + *part;
  }
  format.title =
      "iterator of loader '" + reset.loader + "' set to null" + (where.empty() ? std::string() : " (" + where + ")");
  for (const char* const* frame = kResetHookFrames; *frame != nullptr; ++frame) {
    format.drop_innermost.emplace_back(*frame);
  }
  format.mirror = trace.mirror;
  format.source = trace.source;
  return format;
}

Event record_iterator_reset(const std::string& loader, bool capture_stack) {
  EventLog& log = EventLog::global();
  const TraceOptions options = log.trace_options();
  const EventContext context = log.context();
  Event event;
  event.kind = EventKind::iterator_reset;
  event.time_s = monotonic_now_s();
  event.loader = loader;
  event.epoch = context.epoch;
  event.phase = context.phase;
  event.stage = context.stage;
  if (options.capture_stacks || capture_stack) event.stack = StackCapture::capture();
  if (event.stack && options.capture_stacks && options.print_to != nullptr) {
    *options.print_to << format_traceback(event.stack->frames(), reset_traceback_options(event, options)) << std::flush;
  }
  log.record(event);
  return event;
}

}  // namespace dlreset::trace
