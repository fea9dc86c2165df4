// The late-set_epoch check: a pass that drew its sampler's order before its epoch's set_epoch,
// and so replays the order of the epoch before.
#include <fmt/format.h>

#include <cstddef>
#include <string>

#include "watch/analysis/checks/checks.h"
#include "watch/analysis/wording.h"

namespace dlreset::watch {

namespace {

/// --max-late-set-epoch's --help.
constexpr const char* kHelp =
    "Fail if more passes than this drew their order before their epoch's set_epoch (so they replay the "
    "epoch before)";

void find(const CheckInput& input, Check& check, Findings& /*findings*/) {
  const PythonView& python = input.python;
  for (std::size_t i = 0; i < python.events.size(); ++i) {
    const HookEvent& event = python.events[i];
    if (event.kind != HookEventKind::set_epoch || event.pending_iterator.empty() || !event.epoch ||
        event.pending_epoch == event.epoch) {
      continue;
    }
    ++check.count;
    check.details.push_back(fmt::format(
        "set_epoch({}) on sampler {} of pid {} at {:.2f} s ({}) came after iterator {} had drawn its pass's order "
        "with epoch {} and before it handed out a batch: that pass replays epoch {}'s order",
        *event.epoch, event.sampler, event.pid, event.time_s - input.result.origin_s, program_frame(event.stack),
        event.pending_iterator, event.pending_epoch.value_or(-1), event.pending_epoch.value_or(-1)));
    check.events.push_back(i);
  }
}

std::string section(const WatchReport& /*report*/, const Check& check) {
  return details_section(check, "pass that drew its order before set_epoch",
                         "passes that drew their order before set_epoch");
}

std::string heading(const WatchReport& report, const StackGroup& group) {
  const HookEvent& event = report.python.events[group.events.front()];
  return fmt::format("set_epoch({}) after its pass's order was drawn", event.epoch.value_or(-1));
}

std::string tracebacks(const WatchReport& report, const Check& check) {
  return stack_tracebacks(report, check.events, heading);
}

std::string verdict(const WatchReport& /*report*/, const Check& check) {
  return fmt::format("{} drew {} order before set_epoch, so {} the order of the epoch before.",
                     plural(check.count, "pass", "passes"), check.count == 1 ? "its" : "their",
                     check.count == 1 ? "it replays" : "they replay");
}

std::string gate_words(const WatchReport& /*report*/, const Check& check) {
  return plural(check.count, "pass", "passes") + (check.count == 1 ? " drew its" : " drew their") +
         " order before set_epoch";
}

}  // namespace

CheckSpec late_set_epoch_check() {
  return {{"late_set_epoch", "--max-late-set-epoch", kHelp, "late set_epoch"},
          {find, section, tracebacks, verdict, gate_words},
          /*needs_hook=*/true};
}

}  // namespace dlreset::watch
