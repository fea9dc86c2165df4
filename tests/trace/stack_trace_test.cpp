#include "harness/trace/stack_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "harness/trace/event_log.h"
#include "harness/trace/reset_trace.h"
#include "harness/trace/watched.h"

namespace dlreset::trace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Holder {
  Watched<std::shared_ptr<int>> field;
  static void hook(void*) { record_iterator_reset("probe"); }
};

/// Stands for Lightning's _shutdown_workers_and_reset_iterator: the function whose name the
/// trace must show as the innermost frame.
__attribute__((noinline)) void caller_that_nulls_the_field(Holder& holder) {
  holder.field = nullptr;
  asm volatile("");  // keep the call from being a tail call
}

__attribute__((noinline)) std::shared_ptr<const StackCapture> capture_here() {
  auto capture = StackCapture::capture();
  asm volatile("");
  return capture;
}

TEST(StackCapture, FramesNameTheCallerWithFileAndLine) {
  const auto frames = capture_here()->frames();
  ASSERT_FALSE(frames.empty());
  EXPECT_THAT(frames.front().function, HasSubstr("capture_here"));
  EXPECT_EQ(frames.front().file, "tests/trace/stack_trace_test.cpp");
  EXPECT_GT(frames.front().line, 0);
  EXPECT_TRUE(frames.front().is_project_frame());
}

TEST(ShortFunctionName, DropsParametersReturnTypeAndPrefix) {
  EXPECT_EQ(short_function_name("dlreset::lightning::Loop::run(dlreset::lightning::RunArgs const&)"),
            "lightning::Loop::run");
  EXPECT_EQ(short_function_name("void dlreset::repro::DataFetcher::reset()"), "repro::DataFetcher::reset");
  EXPECT_EQ(short_function_name("(anonymous namespace)::helper(int)"), "{anonymous}::helper");
  EXPECT_EQ(short_function_name("std::function<void ()>::operator()() const"), "std::function<void ()>::operator()");
}

/// Nulls a watched field, in epoch 3 of the fit's train loop, with `tracing`; the global log's
/// own options are restored after. Returns what the log recorded.
std::vector<Event> null_a_watched_field(const TraceOptions& tracing) {
  EventLog& log = EventLog::global();
  const TraceOptions saved = log.trace_options();
  log.set_trace_options(tracing);
  log.clear();
  log.set_context({3, "fit", "train"});
  Holder holder;
  holder.field.arm(&Holder::hook, &holder);
  holder.field = std::make_shared<int>(1);
  caller_that_nulls_the_field(holder);
  log.set_trace_options(saved);
  return log.events();
}

TEST(ResetTrace, RecordsAnEventWithAStackNamingTheCaller) {
  std::ostringstream printed;
  TraceOptions tracing;
  tracing.capture_stacks = true;
  tracing.print_to = &printed;
  const auto events = null_a_watched_field(tracing);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::iterator_reset);
  EXPECT_EQ(events[0].loader, "probe");
  EXPECT_EQ(events[0].epoch, 3);
  EXPECT_EQ(events[0].phase, "fit");
  ASSERT_TRUE(events[0].stack);
  bool named = false;
  for (const auto& frame : events[0].stack->frames()) {
    named = named || frame.function.find("caller_that_nulls_the_field") != std::string::npos;
  }
  EXPECT_TRUE(named);

  const std::string text = printed.str();
  EXPECT_THAT(text, HasSubstr("Traceback (most recent call last)"));
  // The fallback back-end names a frame that holds inlined code by its unqualified name.
  EXPECT_THAT(text, HasSubstr("caller_that_nulls_the_field\n"));
  EXPECT_THAT(text, HasSubstr("File \"tests/trace/stack_trace_test.cpp\", line "));
  EXPECT_THAT(text, Not(HasSubstr("record_iterator_reset")));
  // Innermost last, like Python: the caller comes after the test body that called it.
  EXPECT_LT(text.find("ResetTrace_RecordsAnEvent"), text.find("caller_that_nulls_the_field"));
}

TEST(ResetTrace, CapturesNoStackWhenTracingIsOff) {
  const auto events = null_a_watched_field({});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].stack);
}

}  // namespace
}  // namespace dlreset::trace
