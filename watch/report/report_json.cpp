#include "watch/report/report_json.h"

#include <cstddef>
#include <optional>
#include <vector>

#include "watch/analysis/checks/checks.h"
#include "watch/analysis/fork_threads.h"
#include "watch/analysis/hang_view.h"
#include "watch/analysis/input_wait.h"
#include "watch/report/memory_json.h"
#include "watch/report/optional_json.h"
#include "watch/report/summary_text.h"

namespace dlreset::watch {

namespace {

nlohmann::json fds_json(const FdCounts& fds) {
  return {{"pipes", fds.pipes},
          {"sockets", fds.sockets},
          {"anon_inodes", fds.anon_inodes},
          {"files", fds.files},
          {"shared_memory", fds.shared_memory}};
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
                            {"t", since_watch_began(report, event.time_s)},
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
    if (!event.threads.empty()) entry["threads"] = event.threads;
    if (event.fds) entry["fds"] = fds_json(*event.fds);
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
  for (const CheckSpec& spec : watch::checks()) {
    const Check& check = report.findings.check(spec.flags.name);
    nlohmann::json entry = {
        {"name", spec.flags.name}, {"count", check.count}, {"seen", check.seen}, {"details", check.details}};
    // A measured check's gate holds its measure, not its count.
    if (spec.flags.limit != GateLimit::count) entry["measure"] = optional_json(check.measure);
    if (!check.unseen_why.empty()) entry["unseen_why"] = check.unseen_why;
    checks.push_back(entry);
  }
  return checks;
}

nlohmann::json blocked_json(const BlockedWait& blocked) {
  return {{"batch", blocked.batch},
          {"wait_s", blocked.wait_s},
          {"ready", blocked.ready},
          {"worker", optional_json(blocked.worker)}};
}

/// The longest head-of-line blocked wait of a sum, with its pass; null where none was.
nlohmann::json worst_blocked_json(const std::optional<WorstBlocked>& worst) {
  if (!worst) return nlohmann::json();
  nlohmann::json entry = blocked_json(worst->wait);
  entry["pid"] = worst->pid;
  entry["loader"] = worst->loader;
  entry["pass"] = worst->pass;
  return entry;
}

/// A sum of waits: the time, its fraction and where it went.
nlohmann::json totals_json(const WaitTotals& totals) {
  return {{"wait_s", totals.wait_s},
          {"step_s", totals.step_s},
          {"fraction", totals.fraction()},
          {"passes", totals.passes},
          {"first_wait_new_workers_s", totals.new_workers_s},
          {"first_wait_workers_kept_s", totals.workers_kept_s},
          {"first_wait_no_workers_s", totals.no_workers_s},
          {"first_wait_unknown_s", totals.unknown_s},
          {"steady_wait_s", totals.steady_s},
          {"new_worker_starts", totals.new_worker_starts},
          {"kept_starts", totals.kept_starts},
          {"median_first_batch_s", optional_json(totals.median_first_batch_s())},
          {"steady_p50_s", optional_json(totals.steady_quantile_s(0.5))},
          {"steady_p99_s", optional_json(totals.steady_quantile_s(0.99))},
          {"steady_max_s", optional_json(totals.max_steady_s)},
          {"slow_waits", totals.slow_waits()},
          {"blocked_waits", totals.blocked_waits},
          {"blocked_wait_s", totals.blocked_wait_s},
          {"worst_blocked", worst_blocked_json(totals.worst_blocked)}};
}

nlohmann::json input_wait_json(const WatchReport& report) {
  const InputWait& wait = report.findings.input_wait;
  nlohmann::json passes = nlohmann::json::array();
  for (const PassWait& pass : wait.passes) {
    const PassWaits& waits = report.python.events[pass.event].waits;
    nlohmann::json entry = {
        {"event", pass.event},
        {"pid", pass.pid},
        {"rank", optional_json(pass.rank)},
        {"loader", pass.loader},
        {"iterator", pass.iterator},
        {"pass", pass.number},
        {"thread", waits.thread},
        {"main_thread", waits.main_thread},
        {"begun", since_watch_began(report, waits.begun_s)},
        {"batches", waits.batches},
        {"cause", to_string(pass.cause)},
        {"generation", pass.generation == 0 ? nlohmann::json() : nlohmann::json(pass.generation)},
        {"startup_s", optional_json(pass.startup_s)},
        {"reset_event", optional_json(pass.reset_event)},
        {"first_batch_s", optional_json(pass.first_batch_s)},
        {"first_wait_s", pass.first_wait_s},
        {"steady_wait_s", pass.steady_wait_s},
        {"wait_s", pass.wait_s},
        {"step_s", pass.step_s},
        {"fraction", pass.fraction()},
        {"max_wait_s", optional_json(waits.max_wait_s)},
        {"blocked_waits", waits.blocked_waits},
        {"blocked_wait_s", waits.blocked_wait_s},
        {"worst_blocked", waits.worst_blocked ? blocked_json(*waits.worst_blocked) : nlohmann::json()},
        {"end", waits.end}};
    entry["gap"] = pass.gap ? nlohmann::json{{"total_s", pass.gap->total_s},
                                             {"shutdown_s", pass.gap->shutdown_s},
                                             {"startup_s", pass.gap->startup_s},
                                             {"first_fetch_s", pass.gap->first_fetch_s}}
                            : nlohmann::json();
    passes.push_back(entry);
  }
  nlohmann::json loaders = nlohmann::json::array();
  for (const LoaderWait& loader : wait.loaders) {
    loaders.push_back({{"pid", loader.pid},
                       {"rank", optional_json(loader.rank)},
                       {"loader", loader.loader},
                       {"threads", loader.threads},
                       {"totals", totals_json(loader.totals)}});
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (const ProcessWait& process : wait.processes) {
    ranks.push_back({{"pid", process.pid},
                     {"rank", optional_json(process.rank)},
                     {"totals", totals_json(process.totals)}});
  }
  return {{"complete", wait.incomplete.empty()},
          {"incomplete", wait.incomplete},
          {"job", totals_json(wait.job)},
          {"ranks", ranks},
          {"loaders", loaders},
          {"passes", passes}};
}

/// Each worker killed by a signal, with the evidence its verdict reads.
nlohmann::json worker_deaths_json(const WatchReport& report) {
  nlohmann::json deaths = nlohmann::json::array();
  for (const WorkerDeath& death : report.findings.worker_deaths) {
    const ProcessRecord& worker = report.result.processes[death.record];
    const DeathEvidence& evidence = worker.evidence;
    nlohmann::json oom = nlohmann::json::array();
    for (const OomCount& count : evidence.oom) {
      oom.push_back({{"source", count.source}, {"before", count.before}, {"at_exit", count.at_exit}});
    }
    nlohmann::json shm;
    if (evidence.shm) {
      shm = {{"t", since_watch_began(report, evidence.shm->time_s)},
             {"used_bytes", evidence.shm->used_bytes},
             {"size_bytes", evidence.shm->size_bytes}};
    }
    nlohmann::json shutdown_t;
    if (death.shutdown_event)
      shutdown_t = since_watch_began(report, report.python.events[*death.shutdown_event].time_s);
    deaths.push_back({{"pid", worker.pid},
                      {"loader", worker.loader_key},
                      {"t", since_watch_began(report, *worker.end_s)},
                      {"signal", death.signal},
                      {"cause", death.cause},
                      {"rss_bytes", optional_json(evidence.rss_bytes)},
                      {"tree_rss_bytes", optional_json(evidence.tree_rss_bytes)},
                      {"sampled_t", evidence.sampled_s ? nlohmann::json(since_watch_began(report, *evidence.sampled_s))
                                                       : nlohmann::json()},
                      {"shm", shm},
                      {"oom_kill", oom},
                      {"shutdown_t", shutdown_t},
                      {"sentence", death.sentence}});
  }
  return deaths;
}

/// Each type of descriptor that grew at every pass, with the counts its verdict reads.
nlohmann::json fd_growth_json(const WatchReport& report) {
  nlohmann::json found = nlohmann::json::array();
  for (const FdGrowth& growth : report.findings.fd_growth) {
    nlohmann::json samples = nlohmann::json::array();
    for (const auto& [event, count] : growth.samples) {
      samples.push_back({{"event", event},
                         {"t", since_watch_began(report, report.python.events[event].time_s)},
                         {"count", count}});
    }
    found.push_back({{"pid", growth.pid},
                     {"loader", growth.loader},
                     {"type", plural_name(growth.type)},
                     {"samples", samples},
                     {"boundaries", growth.passes_after_first},
                     {"growth", growth.growth},
                     {"least", growth.least},
                     {"most", growth.most},
                     {"sentence", growth.sentence}});
  }
  return found;
}

/// Each loader whose fork workers started beside the program's own threads: a note, not a check.
nlohmann::json fork_threads_json(const WatchReport& report) {
  nlohmann::json found = nlohmann::json::array();
  for (const ForkBesideThreads& fork : forks_beside_threads(report.python)) {
    found.push_back({{"pid", fork.pid},
                     {"loader", fork.loader},
                     {"iterators", fork.iterators},
                     {"workers", fork.workers},
                     {"threads", fork.threads.size() + 1},
                     {"other_threads", fork.threads},
                     {"sentence", fork.sentence}});
  }
  return found;
}

}  // namespace

nlohmann::json hangs_json(const WatchReport& report) {
  nlohmann::json hangs = nlohmann::json::array();
  for (const HangRecord& hang : report.result.hangs) {
    nlohmann::json processes = nlohmann::json::array();
    for (const ProcessHang& process : describe_hang(report, hang)) {
      nlohmann::json threads = nlohmann::json::array();
      for (const ThreadStack& thread : process.threads)
        threads.push_back({{"name", thread.name}, {"frames", thread.frames}});
      processes.push_back({{"pid", process.pid},
                           {"role", process.role},
                           {"source", process.source},
                           {"stuck_in", process.stuck_in},
                           {"called_from", process.called_from},
                           {"why_none", process.why_none},
                           {"threads", threads}});
    }
    const HangSign& sign = hang.sign;
    hangs.push_back({{"t", since_watch_began(report, sign.time_s)},
                     {"rule", to_string(sign.rule)},
                     {"quiet_s", sign.quiet_s},
                     {"pid", sign.pid},
                     {"iterator", sign.iterator},
                     {"pass", sign.pass},
                     {"batches", sign.batches},
                     {"stopped", hang.stopped},
                     {"processes", processes}});
  }
  return hangs;
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
        {"start_s", since_watch_began(report, process.start_s)},
        {"end_s", process.end_s ? nlohmann::json(since_watch_began(report, *process.end_s)) : nlohmann::json()},
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
                           {"start_s", since_watch_began(report, generation.start_s)},
                           {"end_s", generation.end_s ? nlohmann::json(since_watch_began(report, *generation.end_s))
                                                      : nlohmann::json()},
                           {"cpu_s", generation.cpu_s},
                           {"replaced", generation.replaced}});
  }
  nlohmann::json respawns = nlohmann::json::array();
  for (const Respawn& respawn : report.generations.respawns) {
    respawns.push_back({{"generation", respawn.generation},
                        {"t", since_watch_began(report, respawn.time_s)},
                        {"epoch", epoch_of_start(report, respawn.time_s)},
                        {"replaced", respawn.replaced},
                        {"started", respawn.started}});
  }
  nlohmann::json marks = nlohmann::json::array();
  for (const double mark : result.epoch_marks_s) marks.push_back(since_watch_began(report, mark));
  nlohmann::json peak_owners = nlohmann::json::array();
  for (const auto& [owner, count] : report.findings.peak.by_owner)
    peak_owners.push_back({{"owner", owner}, {"workers", count}});
  return {{"schema", "dlreset.watch"},
          {"schema_version", 3},
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
            {"t", since_watch_began(report, report.findings.peak.time_s)},
            {"by_owner", peak_owners},
            {"overlapping", report.findings.peak.overlapping}}},
          {"live_workers_at_epochs", report.findings.live_at_epochs},
          {"checks", checks_json(report)},
          {"python", python_json(report)},
          {"input_wait", input_wait_json(report)},
          {"worker_deaths", worker_deaths_json(report)},
          {"hang_timeout_s", result.hang_timeout_s > 0 ? nlohmann::json(result.hang_timeout_s) : nlohmann::json()},
          {"hangs", hangs_json(report)},
          {"fd_growth", fd_growth_json(report)},
          {"memory", memory_json(report)},
          {"fork_threads", fork_threads_json(report)},
          {"verdict", verdict(report)},
          {"findings", finding_verdicts(report)}};
}

}  // namespace dlreset::watch
