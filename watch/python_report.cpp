#include "watch/python_report.h"

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <vector>

#include "watch/optional_json.h"
#include "watch/report_text.h"

namespace dlreset::watch {

namespace {

double relative(const WatchReport& report, double time_s) { return time_s - report.result.origin_s; }

std::string rank_of(const HookedProcess& process) {
  if (!process.rank) return "";
  return process.local_rank && *process.local_rank != *process.rank
             ? fmt::format(", rank {} (local {})", *process.rank, *process.local_rank)
             : fmt::format(", rank {}", *process.rank);
}

std::string short_command(const std::string& cmdline) {
  return cmdline.size() > 70 ? cmdline.substr(0, 67) + "..." : cmdline;
}

/// A check's count in words, for the headings of the findings.
std::string counted(const Check& check, const char* one, const char* many) { return plural(check.count, one, many); }

}  // namespace

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
                        relative(report, peak.time_s), owners, cause.empty() ? "" : ": " + cause);
  }
  return text;
}

std::string findings_summary(const WatchReport& report) {
  const Findings& findings = report.findings;
  const PythonView& python = report.python;
  std::string text;
  if (!findings.respawn_causes.empty()) {
    const long total = findings.respawns.count;
    text += findings.respawn_causes.size() == 1 && findings.respawns_without_cause == 0
                ? fmt::format("  {}, all from this stack:\n", plural(total, "respawn", "respawns"))
                : fmt::format("  {}, from {}:\n", plural(total, "respawn", "respawns"),
                              plural(static_cast<long>(findings.respawn_causes.size()), "stack", "stacks"));
    for (const Findings::Cause& cause : findings.respawn_causes) {
      const HookEvent& event = python.events[cause.stopped.events.front()];
      if (findings.respawn_causes.size() > 1 || findings.respawns_without_cause > 0) {
        text += fmt::format("    {} from this one:\n",
                            plural(static_cast<long>(cause.respawns.size()), "respawn", "respawns"));
      }
      text += format_traceback(reset_heading(python, cause.stopped), event.stack, event.frames_omitted, "    ");
    }
    if (findings.respawns_without_cause > 0) {
      text += fmt::format("    {} whose old workers the hook did not see stopped\n",
                          plural(findings.respawns_without_cause, "respawn", "respawns"));
    }
  }
  const auto section = [&](const Check& check, const char* one, const char* many) {
    if (check.count == 0) return;
    text += "  " + counted(check, one, many) + ":\n";
    for (const std::string& detail : check.details) text += "    " + detail + "\n";
  };
  section(findings.leaked_workers, "leaked worker", "leaked workers");
  section(findings.extra_iterators, "extra iterator", "extra iterators");
  section(findings.late_set_epoch, "pass that drew its order before set_epoch",
          "passes that drew their order before set_epoch");
  // One traceback for each distinct stack behind the Python findings. An extra iterator has two:
  // the call that began its pass, and the whole of the call that ended it, where the second
  // iter() of a double one shows.
  const auto tracebacks = [&](const std::vector<std::size_t>& events, const std::string& suffix) {
    for (const StackGroup& group : group_by_stack(python, events)) {
      const HookEvent& event = python.events[group.events.front()];
      const std::string times = group.events.size() > 1 ? fmt::format(" ({} times)", group.events.size()) : "";
      const std::string heading =
          event.kind == HookEventKind::set_epoch
              ? fmt::format("set_epoch({}) after its pass's order was drawn{}", event.epoch.value_or(-1), times)
              : fmt::format("{}{}{}", reset_heading(python, group), suffix, times);
      text += format_traceback(heading, event.stack, event.frames_omitted, "    ");
    }
  };
  tracebacks(findings.extra_iterators.events, "");
  tracebacks(findings.extra_iterators_ended, ", which ended the pass unread");
  tracebacks(findings.late_set_epoch.events, "");
  return text;
}

std::vector<std::string> finding_verdicts(const WatchReport& report) {
  const Findings& findings = report.findings;
  std::vector<std::string> sentences;
  if (findings.leaked_workers.count > 0) {
    sentences.push_back(fmt::format("{} leaked: {}.",
                                    plural(findings.leaked_workers.count, "worker was", "workers were"),
                                    findings.leaked_workers.details.front()));
  }
  if (findings.extra_iterators.count > 0) {
    sentences.push_back(fmt::format("{} began a pass and handed out no batch: {}.",
                                    plural(findings.extra_iterators.count, "iterator", "iterators"),
                                    thrown_away_words(findings.batches_thrown_away, findings.batches_in_flight)));
  }
  if (findings.late_set_epoch.count > 0) {
    sentences.push_back(fmt::format("{} drew {} order before set_epoch, so {} the order of the epoch before.",
                                    plural(findings.late_set_epoch.count, "pass", "passes"),
                                    findings.late_set_epoch.count == 1 ? "its" : "their",
                                    findings.late_set_epoch.count == 1 ? "it replays" : "they replay"));
  }
  return sentences;
}

nlohmann::json python_json(const WatchReport& report) {
  const PythonView& python = report.python;
  nlohmann::json processes = nlohmann::json::array();
  for (const HookedProcess& process : python.processes) {
    processes.push_back({{"pid", process.pid},
                         {"cmdline", process.cmdline},
                         {"hook_loaded", process.hello},
                         {"why_not", process.why_not},
                         {"torch_patched", process.patched},
                         {"torch", process.torch_version},
                         {"rank", optional_json(process.rank)},
                         {"local_rank", optional_json(process.local_rank)},
                         {"unseen", process.unseen},
                         {"hook_errors", process.errors},
                         {"events_lost", process.events_lost}});
  }
  nlohmann::json loaders = nlohmann::json::array();
  for (const LoaderView& loader : python.loaders) {
    loaders.push_back({{"pid", loader.pid},
                       {"loader", loader.key},
                       {"dataset", loader.settings.dataset},
                       {"batch_size", optional_json(loader.settings.batch_size)},
                       {"workers", optional_json(loader.settings.workers)},
                       {"persistent", loader.settings.persistent},
                       {"start_method", loader.settings.start_method},
                       {"iterators_made", loader.iterators_made},
                       {"passes", loader.passes},
                       {"dropped", loader.dropped},
                       {"shutdowns", loader.shutdowns},
                       {"worker_pids", loader.worker_pids}});
  }
  nlohmann::json events = nlohmann::json::array();
  for (const HookEvent& event : python.events) {
    nlohmann::json stack = nlohmann::json::array();
    for (const StackFrame& frame : event.stack) stack.push_back({frame.file, frame.line, frame.function, frame.code});
    nlohmann::json entry = {{"kind", to_string(event.kind)},
                            {"pid", event.pid},
                            {"t", relative(report, event.time_s)},
                            {"rank", optional_json(event.rank)},
                            {"loader", event.loader},
                            {"iterator", event.iterator},
                            {"worker_pids", event.worker_pids},
                            {"yielded", optional_json(event.yielded)},
                            {"in_flight", optional_json(event.in_flight)},
                            {"ready", optional_json(event.ready)},
                            {"sampler", event.sampler},
                            {"sampler_epoch", optional_json(event.sampler_epoch)},
                            {"stack", stack}};
    if (!event.how.empty()) entry["how"] = event.how;
    if (!event.caller.empty()) entry["caller"] = event.caller;
    if (event.epoch) entry["epoch"] = *event.epoch;
    if (!event.pending_iterator.empty()) {
      entry["pending_iterator"] = event.pending_iterator;
      entry["pending_epoch"] = optional_json(event.pending_epoch);
    }
    if (!event.where.empty()) entry["where"] = event.where + ": " + event.error;
    events.push_back(entry);
  }
  return {{"hook", python.hook},
          {"processes", processes},
          {"loaders", loaders},
          {"events", events},
          {"malformed_datagrams", python.malformed}};
}

nlohmann::json checks_json(const WatchReport& report) {
  nlohmann::json checks = nlohmann::json::array();
  for (const Check* check : report.findings.checks()) {
    checks.push_back(
        {{"name", check->name}, {"count", check->count}, {"seen", check->seen}, {"details", check->details}});
  }
  return checks;
}

}  // namespace dlreset::watch
