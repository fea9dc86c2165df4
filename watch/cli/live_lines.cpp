#include "watch/cli/live_lines.h"

#include <iostream>

#include "watch/analysis/generations.h"
#include "watch/analysis/hang_view.h"
#include "watch/analysis/watch_report.h"

namespace dlreset::watch {

void LiveLines::attach(WatchOptions& watch_options) {
  watch_options.on_ready = [this](pid_t root, WatchMode mode, double origin_s) { ready(root, mode, origin_s); };
  if (!options_.live) return;
  watch_options.on_sample = [this](const std::vector<ProcessRecord>& records, const std::vector<double>& epoch_marks_s,
                                   double now_s) {
    if (respawns_) (*respawns_)(records, epoch_marks_s, now_s, iterators_made_);
  };
  watch_options.on_hang = [this](const HangRecord& hang) { hung(hang); };
  watch_options.on_hook_event = [this](const HookEvent& event) {
    if (event.kind == HookEventKind::iterator_made) iterators_made_.push_back(event);
    if (resets_) (*resets_)(event);
  };
}

void LiveLines::hung(const HangRecord& hang) const {
  // Where the program goes on (--on-hang report), its stacks are news now, not at its end.
  const bool going_on = options_.on_hang != "stop";
  std::cerr << options_.program_name << ": the program is hung: " << hang_words(hang.sign) << "; "
            << (going_on ? "every process's stack follows, and the watch goes on.\n"
                         : "the watch ends it; every process's stack is in the summary.\n");
  if (!going_on) return;
  for (const ProcessStacks& stacks : hang.stacks) {
    std::cerr << "  pid " << stacks.pid << ": "
              << (stacks.source.empty() ? "no stacks: " + stacks.why_none + "\n" : stacks.source + " stacks:\n")
              << stacks.text;
  }
}

void LiveLines::ready(pid_t root, WatchMode mode, double origin_s) {
  if (options_.pid != 0) {
    std::cerr << options_.program_name << ": attached to pid " << root << ", following it with "
              << (mode == WatchMode::connector ? "the process events connector" : "polling")
              << "; Ctrl-C stops the watch, not the process.\n";
  }
  GenerationOptions generation_options;
  generation_options.window_s = options_.generation_window_ms / 1000.0;
  generation_options.start_uncertainty_s = start_uncertainty_s(mode, options_.poll_ms);
  respawns_.emplace(options_.program_name, origin_s, generation_options);
  resets_.emplace(options_.program_name, origin_s);
}

}  // namespace dlreset::watch
