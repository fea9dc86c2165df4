// The worker_deaths check on made-up trees and evidence: what a worker killed by a signal is said
// to have run out of, or who sent the signal, and that torch's own shutdown is no death; and the
// resource sampler behind it on real children.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/watch/made_up_tree.h"
#include "watch/analysis/findings.h"
#include "watch/hook/hook_event.h"
#include "watch/tree/resource_sampler.h"

namespace dlreset::watch {
namespace {

using ::testing::HasSubstr;

constexpr std::uint64_t kMiB = 1024 * 1024;

/// Two workers of L1's iterator I1, started at 1 s.
HookEvent iterator_made() {
  HookEvent e = hook_event(HookEventKind::iterator_made, 1.0);
  e.loader = "L1";
  e.iterator = "I1";
  e.worker_pids = {201, 202};
  e.settings = fork_loader(2, false);
  return e;
}

HookEvent shutdown_at(double t) {
  HookEvent e = hook_event(HookEventKind::workers_shutdown, t);
  e.loader = "L1";
  e.iterator = "I1";
  e.caller = "__del__";
  return e;
}

/// A worker of I1 that ended at `end` with `wait_status`.
ProcessRecord worker(pid_t pid, double end, int wait_status, DeathEvidence evidence = {}) {
  ProcessRecord record = fork_of(pid, 1.0, end);
  record.wait_status = wait_status;
  record.evidence = std::move(evidence);
  return record;
}

int killed_by(int signal) { return signal; }  // a wait status: the signal in its low bits
int exited(int code) { return code << 8; }

/// The check's findings for `workers` of a program that ends at `program_end`.
Findings find(std::vector<ProcessRecord> workers, std::vector<HookEvent> events = {}, double program_end = 100.0) {
  std::vector<ProcessRecord> records = {program()};
  for (ProcessRecord& record : workers) records.push_back(std::move(record));
  events.insert(events.begin(), iterator_made());
  return analysed(made_up_watch(std::move(records), std::move(events), program_end)).findings;
}

DeathEvidence shm_evidence(std::uint64_t used, std::uint64_t size) {
  DeathEvidence evidence;
  evidence.shm = ShmUse{9.9, used, size};
  return evidence;
}

DeathEvidence oom_evidence(long cgroup_before, long cgroup_at_exit) {
  DeathEvidence evidence;
  evidence.rss_bytes = 512 * kMiB;
  evidence.tree_rss_bytes = 2048 * kMiB;
  evidence.sampled_s = 9.95;
  evidence.oom = {{"/proc/vmstat", 3, 3 + cgroup_at_exit - cgroup_before},
                  {"/sys/fs/cgroup/memory/job/memory.oom_control", cgroup_before, cgroup_at_exit}};
  return evidence;
}

TEST(WorkerDeaths, ABusErrorSaysHowFullDevShmWasAtTheLastSample) {
  const Findings findings = find({worker(201, 10.0, killed_by(SIGBUS), shm_evidence(62 * kMiB, 64 * kMiB))});
  ASSERT_EQ(findings.check("worker_deaths").count, 1);
  ASSERT_EQ(findings.worker_deaths.size(), 1u);
  EXPECT_EQ(findings.worker_deaths[0].cause, "shm");
  EXPECT_THAT(findings.check("worker_deaths").details[0],
              HasSubstr("worker 201 of L1 of pid 100 was killed by SIGBUS at 10.00 s: `/dev/shm` was 97% full (62 of "
                        "64 MiB) 0.10 s before: the batches in flight do not fit; give the container more shared "
                        "memory or use fewer workers or smaller batches"));
}

TEST(WorkerDeaths, ABusErrorWithoutASampleSaysSo) {
  const Findings findings = find({worker(201, 10.0, killed_by(SIGBUS))});
  ASSERT_EQ(findings.check("worker_deaths").count, 1);
  EXPECT_THAT(findings.check("worker_deaths").details[0], HasSubstr("`/dev/shm` was not sampled"));
}

TEST(WorkerDeaths, ASigkillWhileTheOomKillCountRoseIsTheOomKiller) {
  const Findings findings = find({worker(201, 10.0, killed_by(SIGKILL), oom_evidence(0, 1))});
  ASSERT_EQ(findings.check("worker_deaths").count, 1);
  EXPECT_EQ(findings.worker_deaths[0].cause, "oom");
  EXPECT_THAT(
      findings.check("worker_deaths").details[0],
      HasSubstr("by the kernel's OOM killer: the OOM-kill count in /sys/fs/cgroup/memory/job/memory.oom_control "
                "rose from 0 to 1; its last sampled memory was 512 MiB, the tree's 2 GiB"));
}

TEST(WorkerDeaths, ASigkillWhileNoOomKillCountRoseCameFromOutside) {
  const Findings findings = find({worker(201, 10.0, killed_by(SIGKILL), oom_evidence(2, 2))});
  ASSERT_EQ(findings.check("worker_deaths").count, 1);
  EXPECT_EQ(findings.worker_deaths[0].cause, "outside");
  EXPECT_THAT(findings.check("worker_deaths").details[0],
              HasSubstr("from outside the program, not the kernel's OOM killer (the OOM-kill count of /proc/vmstat "
                        "stayed at 3, /sys/fs/cgroup/memory/job/memory.oom_control stayed at 2)"));
}

TEST(WorkerDeaths, ASigkillWithoutAnOomKillCountCannotRuleTheOomKillerOut) {
  const Findings findings = find({worker(201, 10.0, killed_by(SIGKILL))});
  ASSERT_EQ(findings.check("worker_deaths").count, 1);
  EXPECT_THAT(findings.check("worker_deaths").details[0],
              HasSubstr("no OOM-kill count could be read, so the OOM killer cannot be ruled out"));
}

TEST(WorkerDeaths, TorchsOwnShutdownAndExitsAreNoDeaths) {
  // The program's shutdown ended one with SIGTERM (a worker slow to stop), the other left by
  // itself; a later pass's worker ended with the program's exit (multiprocessing terminates
  // the daemonic workers still alive).
  const Findings findings =
      find({worker(201, 10.0, killed_by(SIGTERM)), worker(202, 5.2, exited(0)), worker(203, 99.0, killed_by(SIGTERM))},
           {shutdown_at(5.0)});
  EXPECT_EQ(findings.check("worker_deaths").count, 0);
  EXPECT_EQ(findings.worker_deaths.size(), 0u);
}

TEST(WorkerDeaths, ASigtermNobodyInTheProgramSentCameFromOutside) {
  const Findings findings = find({worker(201, 10.0, killed_by(SIGTERM)), worker(202, 50.0, exited(0))});
  ASSERT_EQ(findings.check("worker_deaths").count, 1);
  EXPECT_EQ(findings.worker_deaths[0].cause, "outside");
  EXPECT_THAT(findings.check("worker_deaths").details[0],
              HasSubstr("worker 201 of L1 of pid 100 was killed by SIGTERM at 10.00 s from outside the program"));
}

TEST(WorkerDeaths, EachDeathIsCountedWithItsOwnCause) {
  const Findings findings = find({worker(201, 10.0, killed_by(SIGSEGV)), worker(202, 11.0, killed_by(SIGINT)),
                                  worker(203, 12.0, killed_by(SIGBUS), shm_evidence(1 * kMiB, 64 * kMiB))},
                                 {shutdown_at(10.5)});
  ASSERT_EQ(findings.check("worker_deaths").count, 3);
  std::vector<std::string> causes;
  for (const WorkerDeath& death : findings.worker_deaths) causes.push_back(death.cause);
  EXPECT_EQ(causes, (std::vector<std::string>{"crash", "shutdown", "shm"}));
  EXPECT_THAT(findings.check("worker_deaths").details[2],
              HasSubstr("`/dev/shm` was 2% full (1 of 64 MiB) 2.10 s before, and a batch being written fills"));
}

TEST(ResourceSampler, OomKillCountsAreReadFromEachKindOfFile) {
  EXPECT_EQ(parse_oom_kill("pgfault 12\noom_kill 3\nnuma_hit 1\n"), 3);
  EXPECT_EQ(parse_oom_kill("low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n"), 2);
  EXPECT_EQ(parse_oom_kill("oom_kill_disable 0\nunder_oom 0\noom_kill 7\n"), 7);
  EXPECT_EQ(parse_oom_kill("pgfault 12\n"), -1);
}

TEST(ResourceSampler, DevShmIsReadOnceAMountNamespaceATickAndKeptForAnExit) {
  std::vector<pid_t> children;
  for (int i = 0; i < 3; ++i) {
    const pid_t child = ::fork();
    if (child == 0) {
      ::pause();
      ::_exit(0);
    }
    ASSERT_GT(child, 0);
    children.push_back(child);
  }
  ResourceSampler sampler;
  std::vector<int> statm_fds;
  for (const pid_t child : children) {
    statm_fds.push_back(::open(("/proc/" + std::to_string(child) + "/statm").c_str(), O_RDONLY | O_CLOEXEC));
  }
  const std::string oom_file = memory_cgroup_oom_file(children[0]);
  for (int tick = 0; tick < 4; ++tick) {
    sampler.begin_tick(tick * 0.05);
    for (std::size_t i = 0; i < children.size(); ++i) sampler.sample_member(children[i], statm_fds[i], oom_file);
    sampler.end_tick();
  }
  // The three share this process's mount namespace: one read a tick.
  EXPECT_EQ(sampler.shm_reads(), 4);
  ::kill(children[0], SIGKILL);
  ::waitpid(children[0], nullptr, 0);
  const DeathEvidence evidence = sampler.at_exit(children[0], oom_file);
  ASSERT_TRUE(evidence.rss_bytes.has_value());
  EXPECT_GT(*evidence.rss_bytes, 0u);
  EXPECT_GE(*evidence.tree_rss_bytes, *evidence.rss_bytes);
  ASSERT_TRUE(evidence.shm.has_value());
  EXPECT_GT(evidence.shm->size_bytes, 0u);
  ASSERT_FALSE(evidence.oom.empty());
  EXPECT_EQ(evidence.oom[0].source, "/proc/vmstat");
  for (std::size_t i = 1; i < children.size(); ++i) {
    ::kill(children[i], SIGKILL);
    ::waitpid(children[i], nullptr, 0);
  }
  for (const int fd : statm_fds) ::close(fd);
}

}  // namespace
}  // namespace dlreset::watch
