// The worker-deaths check: every worker killed by a signal, and what ran out or who sent it, from
// what the watcher sampled while the program ran (watch/tree/resource_sampler.h): `/dev/shm` for
// a bus error, the kernel's OOM-kill count and the memory for a SIGKILL, the hook's shutdowns
// for the rest. No death is a worker that torch's own shutdown ended (exit 0, or the SIGTERM that
// `_shutdown_workers` and multiprocessing's exit send to a worker slow to stop), nor one the watch
// ended with a hung program (--on-hang stop).
#include <fmt/format.h>
#include <sys/wait.h>

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "watch/analysis/checks/checks.h"
#include "watch/analysis/wording.h"

namespace dlreset::watch {

namespace {

/// --max-worker-deaths's --help.
constexpr const char* kHelp =
    "Fail if more workers than this were killed by a signal (a bus error, the OOM killer, a kill from outside); "
    "torch's own shutdown of its workers does not count";

/// How long after a worker's SIGTERM its parent may end for the SIGTERM to count as the program's
/// exit: multiprocessing's exit terminates the daemonic workers still alive, then the program ends.
constexpr double kExitWindowS = 3.0;

/// A `/dev/shm` this full at the last sample before a bus error ran out.
constexpr double kShmFull = 0.9;

std::string signal_name(int signal) {
  switch (signal) {
    case SIGBUS: return "SIGBUS";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGPIPE: return "SIGPIPE";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return fmt::format("signal {}", signal);
  }
}

/// The last `_shutdown_workers` of the worker's iterator at or before `time_s`, where the hook saw one.
std::optional<std::size_t> shutdown_before(const PythonView& python, const ProcessRecord& worker, double time_s) {
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < python.events.size(); ++i) {
    const HookEvent& event = python.events[i];
    if (event.kind != HookEventKind::workers_shutdown || event.time_s > time_s) continue;
    const bool its_iterator =
        !worker.iterator_key.empty() && fmt::format("{}:{}", event.pid, event.iterator) == worker.iterator_key;
    bool its_pid = false;
    for (const pid_t pid : event.worker_pids) its_pid = its_pid || pid == worker.pid;
    if (its_iterator || its_pid) found = i;
  }
  return found;
}

/// Whether the worker's parent ended within kExitWindowS after it: the program's own exit.
bool parent_exiting(const WatchResult& result, const ProcessRecord& worker) {
  for (const ProcessRecord& record : result.processes) {
    if (record.pid != worker.parent || record.start_s > worker.start_s) continue;
    return record.end_s && *record.end_s >= *worker.end_s - 1e-6 && *record.end_s - *worker.end_s <= kExitWindowS;
  }
  return false;
}

std::string memory_words(const DeathEvidence& evidence) {
  if (!evidence.rss_bytes) return "no sample of its memory was taken";
  std::string words = "its last sampled memory was " + size_words(*evidence.rss_bytes);
  if (evidence.tree_rss_bytes) words += ", the tree's " + size_words(*evidence.tree_rss_bytes);
  return words;
}

/// Why a bus error: `/dev/shm` as last sampled in the worker's mount namespace.
std::string shm_words(const DeathEvidence& evidence, double end_s) {
  if (!evidence.shm || evidence.shm->size_bytes == 0) {
    return "`/dev/shm` was not sampled in its mount namespace, so whether it ran out is not known; a bus error in a "
           "worker is most often `/dev/shm` running out as a batch is written";
  }
  const ShmUse& shm = *evidence.shm;
  const double full = static_cast<double>(shm.used_bytes) / static_cast<double>(shm.size_bytes);
  const auto mib = [](std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); };
  const std::string use = fmt::format("`/dev/shm` was {:.0f}% full ({:.3g} of {:.3g} MiB) {:.2f} s before",
                                      full * 100.0, mib(shm.used_bytes), mib(shm.size_bytes), end_s - shm.time_s);
  const char* fix = "give the container more shared memory or use fewer workers or smaller batches";
  if (full >= kShmFull) return fmt::format("{}: the batches in flight do not fit; {}", use, fix);
  return fmt::format("{}, and a batch being written fills what is left: a bus error in a worker is most often "
                     "`/dev/shm` running out; {}",
                     use, fix);
}

/// Whether the kernel's OOM killer struck at the death: any count that rose, and its words.
std::pair<bool, std::string> oom_words(const DeathEvidence& evidence) {
  if (evidence.oom.empty()) return {false, "no OOM-kill count could be read, so the OOM killer cannot be ruled out"};
  // The cgroup's count (listed after the system's) names the limit that was reached.
  for (auto count = evidence.oom.rbegin(); count != evidence.oom.rend(); ++count) {
    if (count->rose()) {
      return {true, fmt::format("the kernel's OOM killer: the OOM-kill count in {} rose from {} to {}", count->source,
                                count->before, count->at_exit)};
    }
  }
  std::string stayed;
  for (const OomCount& count : evidence.oom) {
    stayed += fmt::format("{}{} stayed at {}", stayed.empty() ? "" : ", ", count.source, count.at_exit);
  }
  return {false, "not the kernel's OOM killer (the OOM-kill count of " + stayed + ")"};
}

/// What the report says of a worker killed by `signal`; nullopt where it is no death (torch's
/// own shutdown, or the program's exit, ended it).
std::optional<WorkerDeath> judge(const CheckInput& input, std::size_t index, int signal) {
  const ProcessRecord& worker = input.result.processes[index];
  const double end_s = *worker.end_s;
  WorkerDeath death;
  death.record = index;
  death.signal = signal;
  death.shutdown_event = shutdown_before(input.python, worker, end_s);
  // "812:L1": L1 of pid 812.
  const std::size_t colon = worker.loader_key.find(':');
  const std::string loader =
      colon == std::string::npos
          ? ""
          : fmt::format(" of {} of pid {}", worker.loader_key.substr(colon + 1), worker.loader_key.substr(0, colon));
  const std::string who = fmt::format("worker {}{} was killed by {} at {}", worker.pid, loader, signal_name(signal),
                                      seconds(end_s - input.result.origin_s));
  const DeathEvidence& evidence = worker.evidence;
  if (signal == SIGTERM && (death.shutdown_event || parent_exiting(input.result, worker))) return std::nullopt;
  if (signal == SIGTERM && input.python.hook != "on") return std::nullopt;  // torch's shutdown cannot be told
  if (signal == SIGBUS) {
    death.cause = "shm";
    death.sentence = who + ": " + shm_words(evidence, end_s);
  } else if (signal == SIGKILL) {
    const auto [oom, words] = oom_words(evidence);
    death.cause = oom ? "oom" : "outside";
    death.sentence = fmt::format("{}{} {}; {}", who, oom ? " by" : ",", words, memory_words(evidence));
    if (!oom && !evidence.oom.empty())
      death.sentence = who + " from outside the program, " + words + "; " + memory_words(evidence);
  } else if (death.shutdown_event) {
    death.cause = "shutdown";
    death.sentence = fmt::format("{}, {:.2f} s after the program shut its workers down (`_shutdown_workers`)", who,
                                 end_s - input.python.events[*death.shutdown_event].time_s);
  } else if (signal == SIGSEGV || signal == SIGABRT || signal == SIGFPE || signal == SIGILL) {
    death.cause = "crash";
    death.sentence = who + ": the worker itself crashed (no shutdown of its iterator was seen before)";
  } else {
    death.cause = "outside";
    death.sentence = who + " from outside the program: no shutdown of its iterator was seen before";
  }
  return death;
}

void find(const CheckInput& input, Check& check, Findings& findings) {
  const WatchResult& result = input.result;
  for (std::size_t i = 0; i < result.processes.size(); ++i) {
    const ProcessRecord& record = result.processes[i];
    if (record.role != ProcessRole::worker || !record.end_s || !record.wait_status) continue;
    if (!WIFSIGNALED(*record.wait_status)) continue;
    // The watch itself ended a hung program (--on-hang stop): its workers' ends are the watch's.
    if (result.hang_stop_s && *record.end_s >= *result.hang_stop_s) continue;
    std::optional<WorkerDeath> death = judge(input, i, WTERMSIG(*record.wait_status));
    if (!death) continue;
    check.details.push_back(death->sentence);
    if (death->shutdown_event) check.events.push_back(*death->shutdown_event);
    findings.worker_deaths.push_back(std::move(*death));
  }
  check.count = static_cast<long>(findings.worker_deaths.size());
}

std::string section(const WatchReport& /*report*/, const Check& check) {
  return details_section(check, "worker killed by a signal", "workers killed by a signal");
}

std::string verdict(const WatchReport& /*report*/, const Check& check) {
  return fmt::format("{} killed by a signal: {}.", plural(check.count, "worker was", "workers were"),
                     check.details.front());
}

std::string gate_words(const WatchReport& /*report*/, const Check& check) {
  return plural(check.count, "worker was", "workers were") + " killed by a signal";
}

}  // namespace

CheckSpec worker_deaths_check() {
  return {{"worker_deaths", "--max-worker-deaths", kHelp}, {find, section, nullptr, verdict, gate_words}};
}

}  // namespace dlreset::watch
