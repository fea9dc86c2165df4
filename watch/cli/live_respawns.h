// Each respawn of a watch, printed once as it is found in the samples while the program runs.
#pragma once

#include <fmt/format.h>
#include <sys/types.h>

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "watch/analysis/generations.h"
#include "watch/analysis/python_view.h"
#include "watch/analysis/watch_report.h"
#include "watch/analysis/worker_classifier.h"
#include "watch/hook/hook_event.h"
#include "watch/tree/process_record.h"

namespace dlreset::watch {

/// A generation must be this old before its respawn is reported live: a fork that is about to
/// run exec (a shell's child) looks like a worker for the few milliseconds before it does, and a
/// generation's members all start within milliseconds.
constexpr double kLiveSettleS = 0.25;

/// Reports each respawn once, as it is found during the watch.
class LiveRespawns {
 public:
  LiveRespawns(std::string program, double origin_s, GenerationOptions options)
      : program_(std::move(program)), origin_s_(origin_s), options_(options) {}

  void operator()(std::vector<ProcessRecord> records, const std::vector<double>& epoch_marks_s, double now_s,
                  const std::vector<HookEvent>& hook_events) {
    classify_processes(records);
    name_workers(records, hook_events);
    const GenerationReport found = find_generations(records, options_);
    for (const Respawn& respawn : found.respawns) {
      if (now_s - respawn.time_s < kLiveSettleS || respawn.time_s <= reported_until_s_) continue;
      reported_until_s_ = respawn.time_s;
      const int epoch = epoch_of(epoch_marks_s, respawn.time_s + options_.start_uncertainty_s);
      std::cerr << fmt::format("{}: at {:.2f} s, {} worker{} replaced by generation {}{}\n", program_,
                               respawn.time_s - origin_s_, respawn.replaced, respawn.replaced == 1 ? " was" : "s were",
                               respawn.generation, epoch >= 0 ? fmt::format(" (epoch {})", epoch) : "");
    }
  }

 private:
  std::string program_;
  double origin_s_;
  GenerationOptions options_;
  double reported_until_s_ = -1.0;  ///< Respawns are found in time order: the last one reported.
};

}  // namespace dlreset::watch
