#include "watch/cli/live_lines.h"

#include <iostream>

#include "watch/analysis/generations.h"
#include "watch/analysis/hang_view.h"
#include "watch/analysis/watch_report.h"
#include "watch/analysis/worker_classifier.h"

namespace dlreset::watch {

void LiveLines::attach(WatchOptions& watch_options) {
  watch_options.on_ready = [this](pid_t root, WatchMode mode, double origin_s) { ready(root, mode, origin_s); };
  if (!options_.live) return;
  watch_options.on_sample = [this](const std::vector<ProcessRecord>& records, const std::vector<double>& epoch_marks_s,
                                   double now_s) {
    records_ = records;
    if (respawns_) (*respawns_)(records, epoch_marks_s, now_s, iterators_made_);
  };
  watch_options.on_hang = [this](const HangRecord& hang) { hung(hang); };
  watch_options.on_hook_event = [this](const HookEvent& event) {
    if (event.kind == HookEventKind::iterator_made) iterators_made_.push_back(event);
    if (resets_) (*resets_)(event);
  };
}

void LiveLines::hung(const HangRecord& hang) const {
  if (options_.on_hang == "stop") {
    std::cerr << options_.program_name << ": the program is hung: " << hang_words(hang.sign)
              << "; the watch ends it; every process's stack is in the summary.\n";
    return;
  }
  // The program goes on (--on-hang report): its stacks are news now, not at its end, and are
  // told as the summary tells them, each process by its role with the frame it is stuck in.
  WatchReport seen;
  seen.result.origin_s = origin_s_;
  seen.result.processes = records_;
  classify_processes(seen.result.processes);
  std::cerr << options_.program_name << ": the program is hung; the watch goes on:\n"
            << hang_text(seen, hang, /*stacks=*/true);
}

void LiveLines::ready(pid_t root, WatchMode mode, double origin_s) {
  if (options_.pid != 0) {
    std::cerr << options_.program_name << ": attached to pid " << root << ", following it with "
              << (mode == WatchMode::connector ? "the process events connector" : "polling")
              << "; Ctrl-C stops the watch, not the process.\n";
  }
  origin_s_ = origin_s;
  GenerationOptions generation_options;
  generation_options.window_s = options_.generation_window_ms / 1000.0;
  generation_options.start_uncertainty_s = start_uncertainty_s(mode, options_.poll_ms);
  respawns_.emplace(options_.program_name, origin_s, generation_options);
  resets_.emplace(options_.program_name, origin_s);
}

}  // namespace dlreset::watch
