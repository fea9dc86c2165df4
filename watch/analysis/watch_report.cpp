#include "watch/analysis/watch_report.h"

#include <algorithm>
#include <utility>

#include "watch/analysis/worker_classifier.h"

namespace dlreset::watch {

namespace {

std::string join_command(const std::vector<std::string>& command) {
  std::string joined;
  for (const std::string& arg : command) joined += (joined.empty() ? "" : " ") + arg;
  return joined;
}

}  // namespace

double start_uncertainty_s(WatchMode mode, int poll_ms) {
  // A look dates a start no later than the look before it; two intervals leave room for a
  // look that itself came late on a busy machine.
  return mode == WatchMode::poll ? 2.0 * poll_ms / 1000.0 : 0.0;
}

WatchReport analyse_watch(WatchResult result, std::vector<std::string> command, std::string epoch_pattern,
                          double generation_window_s) {
  WatchReport report;
  classify_processes(result.processes);
  name_workers(result.processes, result.hook_events);
  GenerationOptions options;
  options.window_s = generation_window_s;
  options.start_uncertainty_s = start_uncertainty_s(result.mode, result.poll_ms);
  report.generations = find_generations(result.processes, options);
  report.start_uncertainty_s = options.start_uncertainty_s;
  if (result.root_wait_status) report.program_status = shell_status(*result.root_wait_status);
  report.python = analyse_python(result.python_hook, std::move(result.hook_events), result.hook_malformed,
                                 result.processes, report.generations, result.python_hook_dir);
  result.hook_events.clear();
  report.result = std::move(result);
  report.findings = analyse_findings(report.result, report.generations, report.python);
  report.command = std::move(command);
  report.epoch_pattern = std::move(epoch_pattern);
  return report;
}

int epoch_of(const std::vector<double>& epoch_marks_s, double time_s) {
  return static_cast<int>(std::upper_bound(epoch_marks_s.begin(), epoch_marks_s.end(), time_s) -
                          epoch_marks_s.begin()) -
         1;
}

int epoch_at(const WatchReport& report, double time_s) { return epoch_of(report.result.epoch_marks_s, time_s); }

int epoch_of_start(const WatchReport& report, double start_s) {
  return epoch_at(report, start_s + report.start_uncertainty_s);
}

double since_watch_began(const WatchReport& report, double time_s) { return time_s - report.result.origin_s; }

std::string what_ran(const WatchReport& report) {
  const std::string command =
      report.command.empty() ? report.result.processes.front().cmdline : join_command(report.command);
  return command.size() > 80 ? command.substr(0, 77) + "..." : command;
}

}  // namespace dlreset::watch
