// The extra-iterators check: passes that began and handed out no batch before the next iter()
// or a shutdown ended them, their prefetched batches thrown away.
#include <fmt/format.h>

#include <string>

#include "watch/analysis/checks/checks.h"
#include "watch/analysis/wording.h"

namespace dlreset::watch {

namespace {

/// --max-extra-iterators's --help.
constexpr const char* kHelp =
    "Fail if more passes than this began and handed out no batch before the next iter() (their "
    "prefetched batches thrown away)";

/// Whether a pass ended having handed out no batch of those it asked its workers for.
bool unread(const PassView& pass) {
  return pass.yielded.value_or(-1) == 0 && pass.in_flight.value_or(0) > 0 && pass.end_event;
}

/// How an event ended an iterator's pass, as the findings say it.
const char* ended_how(const HookEvent& ended) {
  if (ended.kind == HookEventKind::iterator_reset) return "reset by another iter()";
  if (ended.kind == HookEventKind::workers_shutdown) {
    return ended.caller == "__del__" ? "collected (its workers shut down by __del__)" : "shut down";
  }
  return "dropped";
}

void find(const CheckInput& input, Check& check, Findings& /*findings*/) {
  const PythonView& python = input.python;
  for (const PassView& pass : python.passes) {
    if (!unread(pass)) continue;
    const HookEvent& began = python.events[pass.begin_event];
    const HookEvent& ended = python.events[*pass.end_event];
    const LoaderView* loader = python.loader(pass.pid, pass.loader);
    const double origin_s = input.result.origin_s;
    ++check.count;
    check.details.push_back(fmt::format(
        "iterator {} of {} began a pass at {:.2f} s ({}) and handed out no batch before it was {} at {:.2f} s ({}): "
        "{}",
        pass.iterator, loader != nullptr ? loader->describe() : fmt::format("a loader of pid {}", pass.pid),
        began.time_s - origin_s, program_frame(began.stack), ended_how(ended), ended.time_s - origin_s,
        program_frame(ended.stack), thrown_away_words(pass.ready.value_or(0), *pass.in_flight)));
    check.events.push_back(pass.begin_event);
    check.ended.push_back(*pass.end_event);
  }
}

std::string section(const WatchReport& /*report*/, const Check& check) {
  return details_section(check, "extra iterator", "extra iterators");
}

std::string began_heading(const WatchReport& report, const StackGroup& group) {
  return reset_heading(report.python, group);
}

std::string ended_heading(const WatchReport& report, const StackGroup& group) {
  return reset_heading(report.python, group) + ", which ended the pass unread";
}

/// Two for each pass: the call that began it, and the whole of the call that ended it, where
/// the second iter() of a double one shows.
std::string tracebacks(const WatchReport& report, const Check& check) {
  return stack_tracebacks(report, check.events, began_heading) + stack_tracebacks(report, check.ended, ended_heading);
}

std::string verdict(const WatchReport& report, const Check& check) {
  // The batches known to be made, and those asked of the workers: at most this many were thrown away.
  long ready = 0;
  long in_flight = 0;
  for (const PassView& pass : report.python.passes) {
    if (!unread(pass)) continue;
    ready += pass.ready.value_or(0);
    in_flight += *pass.in_flight;
  }
  return fmt::format("{} began a pass and handed out no batch: {}.", plural(check.count, "iterator", "iterators"),
                     thrown_away_words(ready, in_flight));
}

std::string gate_words(const WatchReport& /*report*/, const Check& check) {
  return plural(check.count, "iterator", "iterators") + " handed out no batch before the next iter()";
}

}  // namespace

CheckSpec extra_iterators_check() {
  return {{"extra_iterators", "--max-extra-iterators", kHelp, "extra iterator"},
          {find, section, tracebacks, verdict, gate_words},
          /*needs_hook=*/true};
}

}  // namespace dlreset::watch
