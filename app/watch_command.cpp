#include "app/watch_command.h"

#include <fmt/format.h>

#include <iostream>
#include <optional>
#include <regex>

#include "app/run_report.h"
#include "watch/generations.h"
#include "watch/watch_report.h"
#include "watch/worker_classifier.h"

namespace dlreset::app {

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

watch::WatchMode parse_mode(const std::string& mode) {
  if (mode == "connector") return watch::WatchMode::connector;
  if (mode == "poll") return watch::WatchMode::poll;
  return watch::WatchMode::automatic;
}

/// A generation must be this old before its respawn is reported live: a fork that is about to
/// run exec (a shell's child) looks like a worker for the few milliseconds before it does, and a
/// generation's members all start within milliseconds.
constexpr double kLiveSettleS = 0.25;

/// Reports each respawn once, as it is found during the watch.
class LiveRespawns {
 public:
  LiveRespawns(double origin_s, watch::GenerationOptions options) : origin_s_(origin_s), options_(options) {}

  void operator()(std::vector<watch::ProcessRecord> records, const std::vector<double>& epoch_marks_s, double now_s) {
    watch::classify_processes(records);
    const watch::GenerationReport found = watch::find_generations(records, options_);
    for (const watch::Respawn& respawn : found.respawns) {
      if (now_s - respawn.time_s < kLiveSettleS || respawn.time_s <= reported_until_s_) continue;
      reported_until_s_ = respawn.time_s;
      const int epoch = watch::epoch_of(epoch_marks_s, respawn.time_s + options_.start_uncertainty_s);
      std::cerr << fmt::format("dlreset watch: at {:.2f} s, {} worker{} replaced by generation {}{}\n",
                               respawn.time_s - origin_s_, respawn.replaced, respawn.replaced == 1 ? " was" : "s were",
                               respawn.generation, epoch >= 0 ? fmt::format(" (epoch {})", epoch) : "");
    }
  }

 private:
  double origin_s_;
  watch::GenerationOptions options_;
  double reported_until_s_ = -1.0;  ///< Respawns are found in time order: the last one reported.
};

bool write_report(const std::string& path, const nlohmann::json& document, const char* flag) {
  try {
    write_json(path, document);
    return true;
  } catch (const std::runtime_error& error) {
    std::cerr << "dlreset watch: " << flag << ": " << error.what() << "\n";
    return false;
  }
}

}  // namespace

int watch_command(const WatchCommandOptions& options) {
  watch::WatchOptions watch_options;
  watch_options.command = options.command;
  watch_options.attach_pid = options.pid;
  watch_options.mode = parse_mode(options.mode);
  watch_options.poll_ms = options.poll_ms;
  if (!options.epoch_regex.empty()) {
    try {
      watch_options.epoch_regex.emplace(options.epoch_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& error) {
      std::cerr << "dlreset watch: --epoch-regex: '" << options.epoch_regex
                << "' is not a valid regular expression (" << error.what() << ").\n";
      return kExitUsage;
    }
  }
  std::optional<LiveRespawns> live;
  watch_options.on_ready = [&live, &options](pid_t root, watch::WatchMode mode, double origin_s) {
    if (options.pid != 0) {
      std::cerr << "dlreset watch: attached to pid " << root << ", following it with "
                << (mode == watch::WatchMode::connector ? "the process events connector" : "polling")
                << "; Ctrl-C stops the watch, not the process.\n";
    }
    watch::GenerationOptions generation_options;
    generation_options.window_s = options.generation_window_ms / 1000.0;
    generation_options.start_uncertainty_s = watch::start_uncertainty_s(mode, options.poll_ms);
    live.emplace(origin_s, generation_options);
  };
  if (options.live) {
    watch_options.on_sample = [&live](const std::vector<watch::ProcessRecord>& records,
                                      const std::vector<double>& epoch_marks_s, double now_s) {
      if (live) (*live)(records, epoch_marks_s, now_s);
    };
  }

  watch::WatchResult result;
  try {
    result = watch::run_watch(watch_options);
  } catch (const watch::WatchError& error) {
    std::cerr << "dlreset watch: " << error.what() << "\n";
    return error.exit_status();
  }
  const watch::WatchReport report = watch::analyse_watch(std::move(result), options.command, options.epoch_regex,
                                                         options.generation_window_ms / 1000.0);
  std::cerr << watch::summary_text(report);
  bool written = true;
  if (!options.json_path.empty()) written &= write_report(options.json_path, watch::report_json(report), "--json");
  if (!options.events_path.empty()) {
    written &= write_report(options.events_path, watch::events_json(report), "--events");
  }

  // The program's own failure is the first news; a stopped watch of a process attached to ends
  // as the signal asked.
  int status = report.program_status.value_or(0);
  if (report.result.attached && report.result.signal_received != 0 && !report.result.processes.front().end_s) {
    status = 128 + report.result.signal_received;
  }
  const int respawns = static_cast<int>(report.generations.respawns.size());
  if (options.max_respawns >= 0 && respawns > options.max_respawns) {
    std::string times;
    for (const watch::Respawn& respawn : report.generations.respawns) {
      times += (times.empty() ? "" : ", ") + fmt::format("{:.2f} s", respawn.time_s - report.result.origin_s);
    }
    std::cerr << fmt::format("dlreset watch: workers were replaced {} time{} (at {}), more than the {} allowed{}.\n",
                             respawns, respawns == 1 ? "" : "s", times, options.max_respawns,
                             options.max_respawns == 0 ? " (--expect-persistent)" : "");
    if (status == 0) status = kExitFailure;
  }
  if (!written && status == 0) status = kExitFailure;
  return status;
}

}  // namespace dlreset::app
