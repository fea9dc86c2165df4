#include "watch/watch_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <map>

#include "watch/optional_json.h"
#include "watch/python_report.h"
#include "watch/report_text.h"
#include "watch/worker_classifier.h"

namespace dlreset::watch {

namespace {

double relative(const WatchReport& report, double time_s) { return time_s - report.result.origin_s; }

std::string join_command(const std::vector<std::string>& command) {
  std::string joined;
  for (const std::string& arg : command) joined += (joined.empty() ? "" : " ") + arg;
  return joined;
}

const ProcessRecord& root_record(const WatchReport& report) { return report.result.processes.front(); }

std::string what_ran(const WatchReport& report) {
  const std::string command = report.command.empty() ? root_record(report).cmdline : join_command(report.command);
  return command.size() > 80 ? command.substr(0, 77) + "..." : command;
}

/// Workers of one generation or respawn are usually all alike: say the count that occurs most.
int typical(const std::vector<int>& counts) {
  std::map<int, int> seen;
  for (const int count : counts) ++seen[count];
  return std::max_element(seen.begin(), seen.end(),
                          [](const auto& a, const auto& b) {
                            return a.second < b.second || (a.second == b.second && a.first < b.first);
                          })
      ->first;
}

std::string epoch_label(int epoch) { return epoch < 0 ? "before the first epoch" : fmt::format("epoch {}", epoch); }

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

namespace {

/// The epoch a worker start belongs to. A start found by polling is dated up to one interval
/// before it happened, and the epoch line that came just before it may be read in that interval.
int epoch_of_start(const WatchReport& report, double start_s) {
  return epoch_at(report, start_s + report.start_uncertainty_s);
}

}  // namespace

std::string verdict(const WatchReport& report) {
  const GenerationReport& found = report.generations;
  if (found.workers == 0) {
    return std::string("No worker process was seen: the program ran with 0 workers or with thread workers") +
           (report.result.mode == WatchMode::poll ? ", or its workers lived less than one look at /proc (" +
                                                        std::to_string(report.result.poll_ms) + " ms)."
                                                  : ".");
  }
  if (found.respawns.empty() && report.findings.leaked_workers.count > 0) {
    return fmt::format("{} {} in {} and none was replaced, but {}: the workers are not kept, they pile up.",
                       plural(found.workers, "worker started", "workers started"),
                       found.generations.size() == 1 ? "at once" : "in all",
                       plural(static_cast<long>(found.generations.size()), "generation", "generations"),
                       plural(report.findings.leaked_workers.count, "was leaked", "were leaked"));
  }
  if (found.respawns.empty()) {
    // Where the hook says a loader is not persistent, its workers last one pass: none replaced
    // here only means it made no second pass.
    std::string not_persistent;
    int count = 0;
    for (const LoaderView& loader : report.python.loaders) {
      if (loader.settings.persistent || loader.worker_pids.empty()) continue;
      not_persistent += (not_persistent.empty() ? "" : ", ") + loader.key;
      ++count;
    }
    return fmt::format("{} {} in {} and none was replaced{}.",
                       plural(found.workers, "worker started", "workers started"),
                       found.generations.size() == 1 ? "at once" : "in all",
                       plural(static_cast<long>(found.generations.size()), "generation", "generations"),
                       count == 0
                           ? std::string(": the workers are persistent")
                           : fmt::format(", but {} {} not persistent (persistent_workers=False), so every new pass "
                                         "of {} starts new workers",
                                         not_persistent, count == 1 ? "is" : "are", count == 1 ? "it" : "them"));
  }
  std::vector<int> replaced;
  double replacement_cpu_s = 0.0;
  for (const Respawn& respawn : found.respawns) {
    replaced.push_back(respawn.replaced);
    replacement_cpu_s += found.generations[static_cast<std::size_t>(respawn.generation - 1)].cpu_s;
  }
  const double span_s = found.respawns.back().time_s - found.generations.front().start_s;
  const int times = static_cast<int>(found.respawns.size());
  // Where the hook saw that every replaced set was a loader's without persistent_workers, that
  // is the cause; otherwise the loop threw away workers it could have kept.
  bool all_not_persistent = !report.findings.respawn_causes.empty() && report.findings.respawns_without_cause == 0;
  for (const Findings::Cause& cause : report.findings.respawn_causes) {
    const HookEvent& event = report.python.events[cause.stopped.events.front()];
    const LoaderView* loader = report.python.loader(event.pid, event.loader);
    all_not_persistent &= loader != nullptr && !loader->settings.persistent;
  }
  return fmt::format("{} replaced {}, every {}: {}; the replacements used {} of CPU, start-up and data set loads "
                     "included.",
                     plural(typical(replaced), "worker was", "workers were"), plural(times, "time", "times"),
                     seconds(span_s / times),
                     all_not_persistent ? "its loader is not persistent (persistent_workers=False), so every pass "
                                          "starts new workers; set persistent_workers=True to keep them"
                                        : "the loop is not keeping persistent workers",
                     seconds(replacement_cpu_s));
}

std::string summary_text(const WatchReport& report) {
  const WatchResult& result = report.result;
  const ProcessRecord& root = root_record(report);
  const double ran_s = result.end_s - result.origin_s;
  std::string text;
  const std::string how = result.mode == WatchMode::connector
                              ? "the kernel's process events connector"
                              : fmt::format("polling /proc every {} ms ({})", result.poll_ms, result.mode_reason);
  text +=
      fmt::format("{}: '{}' (pid {}) {} {}, {}; followed with {}\n", report.program, what_ran(report), root.pid,
                  result.attached ? "was watched for" : "ran", seconds(ran_s),
                  root.end_s ? describe_wait_status(result.root_wait_status) : "still running when the watch stopped",
                  how);
  std::map<ProcessRole, int> roles;
  for (std::size_t i = 1; i < result.processes.size(); ++i) ++roles[result.processes[i].role];
  text += fmt::format("  descendants: {} in all: {}, {}, {}, {}\n", result.processes.size() - 1,
                      plural(roles[ProcessRole::worker], "worker", "workers"),
                      plural(roles[ProcessRole::program], "training process", "training processes"),
                      plural(roles[ProcessRole::helper], "helper", "helpers"),
                      plural(roles[ProcessRole::other], "other", "others"));
  const GenerationReport& found = report.generations;
  text += fmt::format("  workers: {} started in {}\n", found.workers,
                      plural(static_cast<long>(found.generations.size()), "generation", "generations"));
  for (const Generation& generation : found.generations) {
    const double start = relative(report, generation.start_s);
    const std::string lived = generation.end_s
                                  ? fmt::format("{:.2f}–{:.2f} s, lived {}", start, relative(report, *generation.end_s),
                                                seconds(*generation.end_s - generation.start_s))
                                  : fmt::format("from {:.2f} s, still alive at the end", start);
    text += fmt::format("    generation {}: {} {} {} of pid {}, {}, CPU {}{}\n", generation.index,
                        generation.members.size(), to_string(generation.start),
                        generation.members.size() == 1 ? "worker" : "workers", generation.parent, lived,
                        seconds(generation.cpu_s),
                        generation.replaced > 0 ? fmt::format(", replaced {}", generation.replaced) : "");
    text += generation_cause(report, static_cast<std::size_t>(generation.index - 1));
  }
  if (!found.respawns.empty()) {
    std::string at;
    for (const Respawn& respawn : found.respawns) {
      if (!at.empty()) at += ", ";
      at += seconds(relative(report, respawn.time_s));
      if (!result.epoch_marks_s.empty()) at += " (" + epoch_label(epoch_of_start(report, respawn.time_s)) + ")";
    }
    text += fmt::format("  respawns: {}, at {}\n", found.respawns.size(), at);
  }
  if (!report.epoch_pattern.empty()) {
    text += fmt::format("  epochs: {} lines matched '{}'\n", result.epoch_marks_s.size(), report.epoch_pattern);
    for (std::size_t e = 0; e < result.epoch_marks_s.size(); ++e) {
      int respawns = 0;
      int replaced = 0;
      for (const Respawn& respawn : found.respawns) {
        if (epoch_of_start(report, respawn.time_s) == static_cast<int>(e)) {
          ++respawns;
          replaced += respawn.replaced;
        }
      }
      text += fmt::format("    epoch {} from {:.2f} s: {}{}\n", e, relative(report, result.epoch_marks_s[e]),
                          plural(respawns, "respawn", "respawns"),
                          respawns > 0 ? fmt::format(" ({} workers replaced)", replaced) : "");
    }
  }
  text += python_summary(report);
  std::string others;
  for (std::size_t i = 1; i < result.processes.size(); ++i) {
    const ProcessRecord& process = result.processes[i];
    if (process.role == ProcessRole::worker) continue;
    const std::string cmdline = process.cmdline.size() > 60 ? process.cmdline.substr(0, 57) + "..." : process.cmdline;
    const double start = relative(report, process.start_s);
    others += fmt::format("    pid {} ({}, {}): {}, {}, CPU {}\n", process.pid, to_string(process.role),
                          process.exec_seen ? "exec" : "fork", cmdline,
                          process.end_s ? fmt::format("{:.2f}–{:.2f} s, {}", start, relative(report, *process.end_s),
                                                      describe_wait_status(process.wait_status))
                                        : fmt::format("from {:.2f} s, still running", start),
                          seconds(process.cpu_s));
  }
  if (!others.empty()) text += "  other processes:\n" + others;
  text += fmt::format("  watcher: {:.2f}% of one core ({} CPU over {})\n",
                      ran_s > 0 ? 100.0 * result.watcher_cpu_s / ran_s : 0.0, seconds(result.watcher_cpu_s),
                      seconds(ran_s));
  if (result.events_lost > 0) {
    text += fmt::format("  the kernel dropped {} event reports; /proc was read again each time, so some "
                        "short-lived processes may be missing\n",
                        result.events_lost);
  }
  text += findings_summary(report);
  text += "  " + verdict(report) + "\n";
  if (const std::string cause = overlap_cause(report.findings.peak); !cause.empty()) {
    // Ordinary torch, said plainly so that the peak is not taken for a leak: a pass's workers end
    // when its iterator is exhausted or collected, and a loop that reads a loader by its length
    // keeps the old iterator until the next iter() has made the new one.
    text += fmt::format("  {} were alive at once because {}: torch ends a pass's workers only when its iterator is "
                        "exhausted or collected, and this loop kept the last pass's iterator until the next one was "
                        "made.\n",
                        plural(report.findings.peak.workers, "worker", "workers"), cause);
  }
  for (const std::string& sentence : finding_verdicts(report)) text += "  " + sentence + "\n";
  return text;
}

nlohmann::json report_json(const WatchReport& report) {
  const WatchResult& result = report.result;
  nlohmann::json processes = nlohmann::json::array();
  for (const ProcessRecord& process : result.processes) {
    nlohmann::json entry = {
        {"pid", process.pid},
        {"parent", process.parent},
        {"role", to_string(process.role)},
        {"start", to_string(process.start)},
        {"how", process.exec_seen ? "exec" : "fork"},
        {"cmdline", process.cmdline},
        {"start_s", relative(report, process.start_s)},
        {"end_s", process.end_s ? nlohmann::json(relative(report, *process.end_s)) : nlohmann::json()},
        {"exit", describe_wait_status(process.wait_status)},
        {"cpu_s", process.cpu_s},
        {"existed_at_attach", process.existed_at_attach}};
    processes.push_back(entry);
  }
  nlohmann::json generations = nlohmann::json::array();
  for (const Generation& generation : report.generations.generations) {
    nlohmann::json pids = nlohmann::json::array();
    for (const std::size_t member : generation.members) pids.push_back(result.processes[member].pid);
    const std::size_t g = static_cast<std::size_t>(generation.index - 1);
    // A report made without the hook's view (a test's, an attached watch) has no entries here.
    const auto entry = [g](const std::vector<std::optional<std::size_t>>& entries) {
      return g < entries.size() ? entries[g] : std::nullopt;
    };
    const std::optional<std::size_t> made = entry(report.python.generation_made);
    generations.push_back({{"index", generation.index},
                           {"loader", made ? report.python.events[*made].loader : ""},
                           {"made_event", optional_json(made)},
                           {"stopped_event", optional_json(entry(report.python.generation_stopped))},
                           {"parent", generation.parent},
                           {"start", to_string(generation.start)},
                           {"workers", pids},
                           {"start_s", relative(report, generation.start_s)},
                           {"end_s",
                            generation.end_s ? nlohmann::json(relative(report, *generation.end_s)) : nlohmann::json()},
                           {"cpu_s", generation.cpu_s},
                           {"replaced", generation.replaced}});
  }
  nlohmann::json respawns = nlohmann::json::array();
  for (const Respawn& respawn : report.generations.respawns) {
    respawns.push_back({{"generation", respawn.generation},
                        {"t", relative(report, respawn.time_s)},
                        {"epoch", epoch_of_start(report, respawn.time_s)},
                        {"replaced", respawn.replaced},
                        {"started", respawn.started}});
  }
  nlohmann::json marks = nlohmann::json::array();
  for (const double mark : result.epoch_marks_s) marks.push_back(relative(report, mark));
  nlohmann::json peak_owners = nlohmann::json::array();
  for (const auto& [owner, count] : report.findings.peak.by_owner)
    peak_owners.push_back({{"owner", owner}, {"workers", count}});
  return {{"schema", "dlreset.watch"},
          {"schema_version", 2},
          {"command", report.command},
          {"pid", result.root},
          {"attached", result.attached},
          {"mode", to_string(result.mode)},
          {"mode_reason", result.mode_reason},
          {"poll_ms", result.poll_ms},
          {"duration_s", result.end_s - result.origin_s},
          {"exit", describe_wait_status(result.root_wait_status)},
          {"exit_status", optional_json(report.program_status)},
          {"workers", report.generations.workers},
          {"generations", generations},
          {"respawns", respawns},
          {"epoch_pattern", report.epoch_pattern},
          {"epoch_marks_s", marks},
          {"processes", processes},
          {"events_lost", result.events_lost},
          {"watcher_cpu_s", result.watcher_cpu_s},
          {"peak_live_workers",
           {{"workers", report.findings.peak.workers},
            {"t", relative(report, report.findings.peak.time_s)},
            {"by_owner", peak_owners},
            {"overlapping", report.findings.peak.overlapping}}},
          {"live_workers_at_epochs", report.findings.live_at_epochs},
          {"checks", checks_json(report)},
          {"python", python_json(report)},
          {"verdict", verdict(report)},
          {"findings", finding_verdicts(report)}};
}

nlohmann::json events_json(const WatchReport& report) {
  const WatchResult& result = report.result;
  const PythonView& python = report.python;
  // One group of lanes per loader where the hook named it, else per parent; a lone parent's is
  // plainly "workers".
  std::map<pid_t, int> parents;
  for (const Generation& generation : report.generations.generations) parents[generation.parent] = 0;
  const auto lane_of = [&](const ProcessRecord& worker) {
    if (const LoaderView* loader = python.loader_of_worker(worker.pid)) {
      return fmt::format("{} {} (pid {})", loader->key, loader->dataset_class(), loader->pid);
    }
    return parents.size() == 1 ? std::string("workers") : fmt::format("workers of pid {}", worker.parent);
  };
  struct Timed {
    double t;
    nlohmann::json event;
  };
  std::vector<Timed> timed;
  int widest = 0;
  std::map<std::string, int> start_methods;
  for (const Generation& generation : report.generations.generations) {
    widest = std::max(widest, static_cast<int>(generation.members.size()));
    ++start_methods[to_string(generation.start)];
    for (const std::size_t member : generation.members) {
      const ProcessRecord& worker = result.processes[member];
      // The pid names the worker: unlike a slot number it never stands for two lives at once,
      // so the plot pairs every spawn with its own exit.
      nlohmann::json common = {
          {"loader", lane_of(worker)}, {"worker", worker.pid}, {"pid", worker.pid}, {"generation", generation.index}};
      nlohmann::json spawn = common;
      spawn["kind"] = "spawn";
      spawn["t"] = relative(report, worker.start_s);
      spawn["epoch"] = epoch_of_start(report, worker.start_s);
      timed.push_back({worker.start_s, spawn});
      if (worker.end_s) {
        nlohmann::json exit = common;
        exit["kind"] = "exit";
        exit["t"] = relative(report, *worker.end_s);
        exit["epoch"] = epoch_at(report, *worker.end_s);
        timed.push_back({*worker.end_s, exit});
      }
    }
  }
  // Where the program stopped a generation's workers (the hook's stack says who): drawn as the
  // iterator resets of dlreset run's timelines are.
  for (std::size_t g = 0; g < python.generation_stopped.size(); ++g) {
    const std::optional<std::size_t> stopped = python.generation_stopped[g];
    if (!stopped || !is_reset(python.events[*stopped])) continue;
    const HookEvent& event = python.events[*stopped];
    const ProcessRecord& first = result.processes[report.generations.generations[g].members.front()];
    timed.push_back({event.time_s,
                     {{"kind", "iterator_reset"},
                      {"t", relative(report, event.time_s)},
                      {"loader", lane_of(first)},
                      {"phase", "fit"},
                      {"epoch", epoch_at(report, event.time_s)},
                      {"where", program_frame(event.stack)}}});
  }
  std::stable_sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) { return a.t < b.t; });
  nlohmann::json events = nlohmann::json::array();
  for (Timed& entry : timed) events.push_back(std::move(entry.event));
  nlohmann::json epochs = nlohmann::json::array();
  for (std::size_t e = 0; e < result.epoch_marks_s.size(); ++e) {
    const double end = e + 1 < result.epoch_marks_s.size() ? result.epoch_marks_s[e + 1] : result.end_s;
    epochs.push_back({{"epoch", e},
                      {"start", relative(report, result.epoch_marks_s[e])},
                      {"end", relative(report, end)}});
  }
  std::string start_method;
  for (const auto& [name, count] : start_methods) start_method += (start_method.empty() ? "" : "+") + name;
  return {{"schema", "dlreset.events"},
          {"schema_version", 2},
          {"variant", "watched"},
          {"command", what_ran(report)},
          {"workers", widest},
          {"start_method", start_method.empty() ? "none" : start_method},
          {"total_s", result.end_s - result.origin_s},
          {"epochs", epochs},
          {"events", events}};
}

}  // namespace dlreset::watch
