#include "watch/report/summary_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <vector>

#include "watch/analysis/checks/checks.h"
#include "watch/analysis/fork_threads.h"
#include "watch/analysis/hang_view.h"
#include "watch/analysis/wording.h"

namespace dlreset::watch {

namespace {

const ProcessRecord& root_record(const WatchReport& report) { return report.result.processes.front(); }

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

std::string rank_of(const HookedProcess& process) {
  if (!process.rank) return "";
  return process.local_rank && *process.local_rank != *process.rank
             ? fmt::format(", rank {} (local {})", *process.rank, *process.local_rank)
             : fmt::format(", rank {}", *process.rank);
}

std::string short_command(const std::string& cmdline) {
  return cmdline.size() > 70 ? cmdline.substr(0, 67) + "..." : cmdline;
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
  // Workers that are never replaced but pile up are the leak's verdict, not persistence's.
  const long leaked = report.findings.check("leaked_workers").count;
  if (found.respawns.empty() && leaked > 0) {
    return fmt::format("{} {} in {} and none was replaced, but {}: the workers are not kept, they pile up.",
                       plural(found.workers, "worker started", "workers started"),
                       found.generations.size() == 1 ? "at once" : "in all",
                       plural(static_cast<long>(found.generations.size()), "generation", "generations"),
                       plural(leaked, "was leaked", "were leaked"));
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
    const double start = since_watch_began(report, generation.start_s);
    const std::string lived =
        generation.end_s ? fmt::format("{:.2f}–{:.2f} s, lived {}", start, since_watch_began(report, *generation.end_s),
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
      at += seconds(since_watch_began(report, respawn.time_s));
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
      text += fmt::format("    epoch {} from {:.2f} s: {}{}\n", e, since_watch_began(report, result.epoch_marks_s[e]),
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
    const double start = since_watch_began(report, process.start_s);
    others +=
        fmt::format("    pid {} ({}, {}): {}, {}, CPU {}\n", process.pid, to_string(process.role),
                    process.exec_seen ? "exec" : "fork", cmdline,
                    process.end_s ? fmt::format("{:.2f}–{:.2f} s, {}", start, since_watch_began(report, *process.end_s),
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
  for (const HangRecord& hang : result.hangs) text += hang_text(report, hang, /*stacks=*/true);
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
  // Information, not a finding: no gate holds it.
  for (const ForkBesideThreads& fork : forks_beside_threads(report.python)) text += "  note: " + fork.sentence + ".\n";
  return text;
}

std::string generation_cause(const WatchReport& report, std::size_t generation) {
  const PythonView& python = report.python;
  if (generation >= python.generation_made.size() || !python.generation_made[generation]) return "";
  const HookEvent& made = python.events[*python.generation_made[generation]];
  const LoaderView* loader = python.loader(made.pid, made.loader);
  std::string line =
      fmt::format("      {}: iterator {} made at {}", loader != nullptr ? loader->short_name() : "a loader",
                  made.iterator, program_frame(made.stack));
  if (const std::optional<std::size_t> stopped = python.generation_stopped[generation]) {
    const HookEvent& event = python.events[*stopped];
    if (event.caller == "__del__") {
      line += ", stopped when the iterator was collected";
    } else if (event.caller == "_next_data") {
      line += ", stopped at the end of its pass";
    } else {
      line += fmt::format(", stopped at {} ({})", program_frame(event.stack),
                          event.kind == HookEventKind::iterator_dropped
                              ? "_iterator " + std::string(event.how == "None" ? "set to None" : event.how)
                              : "_shutdown_workers()");
    }
  }
  return line + "\n";
}

std::string python_summary(const WatchReport& report) {
  const PythonView& python = report.python;
  std::string text;
  if (python.hook != "on") {
    text += "  python hook: " + python.hook + "\n";
  } else {
    int hooked = 0;
    for (const HookedProcess& process : python.processes) hooked += process.hello;
    text += fmt::format("  python hook: on; {} loaded it\n", plural(hooked, "process", "processes"));
    for (const HookedProcess& process : python.processes) {
      if (process.hello) {
        std::string facts = process.patched ? (process.torch_version.empty() ? "torch.utils.data patched"
                                                                             : "torch " + process.torch_version)
                                            : "never imported torch.utils.data";
        if (process.events_lost > 0) facts += fmt::format(", at least {} events lost", process.events_lost);
        text +=
            fmt::format("    pid {}{}: {}: {}\n", process.pid, rank_of(process), short_command(process.cmdline), facts);
        for (const std::string& unseen : process.unseen) text += "      not seen: " + unseen + "\n";
        for (const std::string& error : process.errors)
          text += "      the hook stopped at an error of its own: " + error + "\n";
      } else if (!process.why_not.empty()) {
        text += fmt::format("    pid {}: {}: did not load the hook: {}\n", process.pid, short_command(process.cmdline),
                            process.why_not);
      }
    }
    if (python.malformed > 0)
      text += fmt::format("    {} datagrams on the socket were not hook events\n", python.malformed);
  }
  if (!python.loaders.empty()) {
    text += "  loaders:\n";
    for (const LoaderView& loader : python.loaders) {
      text += fmt::format("    {}: {}, {}, {} dropped, {}\n", loader.describe(),
                          plural(loader.iterators_made, "iterator made", "iterators made"),
                          plural(loader.passes, "pass", "passes"), loader.dropped,
                          plural(loader.shutdowns, "shutdown", "shutdowns"));
    }
  }
  const LivePeak& peak = report.findings.peak;
  if (peak.workers > 0) {
    std::string owners;
    for (const auto& [owner, count] : peak.by_owner)
      owners += (owners.empty() ? "" : ", ") + fmt::format("{}: {}", owner, count);
    const std::string cause = overlap_cause(peak);
    text += fmt::format("  live workers: at most {} at once, at {:.2f} s ({}){}\n", peak.workers,
                        since_watch_began(report, peak.time_s), owners, cause.empty() ? "" : ": " + cause);
  }
  return text;
}

std::string findings_summary(const WatchReport& report) {
  // Each check's lines, then each check's tracebacks: the counts read together before the stacks.
  std::string text;
  for (const CheckSpec& spec : checks()) {
    if (spec.steps.section != nullptr) text += spec.steps.section(report, report.findings.check(spec.flags.name));
  }
  for (const CheckSpec& spec : checks()) {
    if (spec.steps.tracebacks != nullptr) text += spec.steps.tracebacks(report, report.findings.check(spec.flags.name));
  }
  return text;
}

std::vector<std::string> finding_verdicts(const WatchReport& report) {
  std::vector<std::string> sentences;
  for (const CheckSpec& spec : checks()) {
    const Check& check = report.findings.check(spec.flags.name);
    if (spec.steps.verdict != nullptr && check.count > 0) sentences.push_back(spec.steps.verdict(report, check));
  }
  return sentences;
}

}  // namespace dlreset::watch
