// The fd_growth check on made-up passes and descriptor counts: a type that grew at every pass of a
// process's loaders of one kind is a finding, counted as what piled up over the job; growth at
// one boundary, passes that overlap and other processes' counts are not. And the note on workers
// forked beside the program's own threads, which is no check; and the census on a real pipe.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/watch/made_up_tree.h"
#include "watch/analysis/findings.h"
#include "watch/analysis/fork_threads.h"
#include "watch/analysis/python_view.h"
#include "watch/hook/hook_event.h"
#include "watch/tree/fd_census.h"

// The file's own namespace: the asan preset compiles the suite's files together (a unity build),
// and each names its made-up events alike.
namespace dlreset::watch::fd_growth_test {
namespace {

using ::testing::HasSubstr;

FdCounts fds(long pipes, long files = 4) {
  FdCounts counts;
  counts.pipes = pipes;
  counts.files = files;
  counts.sockets = 1;  // the hook's own
  return counts;
}

/// `loader`'s iterator `iterator` made at `t` with two fork workers, the process's descriptors
/// counted as `counts` then.
HookEvent made(double t, const std::string& loader, const std::string& iterator, std::optional<FdCounts> counts,
               bool persistent = true, pid_t pid = kProgram) {
  HookEvent e = hook_event(HookEventKind::iterator_made, t, pid);
  e.loader = loader;
  e.iterator = iterator;
  e.worker_pids = {static_cast<pid_t>(pid * 10 + static_cast<pid_t>(t)), static_cast<pid_t>(pid * 10 + 5)};
  e.settings = fork_loader(2, persistent);
  e.fds = counts;
  return e;
}

/// iter() again on the persistent iterator I1 of L1 at `t`.
HookEvent reset(double t, std::optional<FdCounts> counts, pid_t pid = kProgram) {
  HookEvent e = hook_event(HookEventKind::iterator_reset, t, pid);
  e.loader = "L1";
  e.iterator = "I1";
  e.fds = counts;
  return e;
}

HookEvent shutdown(double t, const std::string& iterator) {
  HookEvent e = hook_event(HookEventKind::workers_shutdown, t);
  e.iterator = iterator;
  e.caller = "__del__";
  return e;
}

/// The passes of a persistent L1 whose pipes read `pipes` at each pass's start.
std::vector<HookEvent> persistent_passes(const std::vector<long>& pipes, pid_t pid = kProgram) {
  std::vector<HookEvent> events = {made(1.0, "L1", "I1", fds(pipes.front()), true, pid)};
  for (std::size_t i = 1; i < pipes.size(); ++i)
    events.push_back(reset(1.0 + static_cast<double>(i), fds(pipes[i]), pid));
  return events;
}

struct Found {
  PythonView python;
  Findings findings;
  const Check& check() const { return findings.check("fd_growth"); }
};

/// The watch of the program alone, whose hook sent `events` (some from other pids).
Found find(const std::vector<HookEvent>& events) {
  WatchReport report = analysed(made_up_watch({program()}, events));
  return Found{std::move(report.python), std::move(report.findings)};
}

TEST(FdGrowth, PipesThatGrowAtEveryPassOfAPersistentLoaderAreOneFindingCountedOverTheJob) {
  const Found found = find(persistent_passes({13, 17, 21, 25}));
  EXPECT_EQ(found.check().count, 12);
  ASSERT_EQ(found.findings.fd_growth.size(), 1u);
  EXPECT_EQ(found.findings.fd_growth[0].passes_after_first, 3);
  EXPECT_EQ(found.check().details[0],
            "pipes grew by 4 a pass in pid 100, at each of the 3 passes of L1 (Squares, batch 16, 2 fork workers, "
            "persistent), after the first (13, 17, 21, 25): an iterator that is not shut down keeps its queues, and a "
            "worker whose Process object is still referenced keeps its pipes (torch's atexit hook with "
            "persistent_workers and pin_memory, pytorch#91252)");
}

TEST(FdGrowth, GrowthAtSomeBoundariesButNotAllIsNoFinding) {
  EXPECT_EQ(find(persistent_passes({13, 17, 17, 21})).check().count, 0);
  EXPECT_EQ(find(persistent_passes({1, 1, 2, 1})).check().count, 0);  // the plain loop's pipes, measured
  EXPECT_EQ(find(persistent_passes({13, 17, 15, 21})).check().count, 0);
}

TEST(FdGrowth, TwoBoundariesAreTheFewestThatCount) {
  EXPECT_EQ(find(persistent_passes({13, 17})).check().count, 0);
  EXPECT_EQ(find(persistent_passes({13, 17, 21})).check().count, 8);
}

TEST(FdGrowth, UnevenGrowthGivesItsLeastAndMost) {
  const Found found = find(persistent_passes({10, 14, 20, 24}));
  EXPECT_EQ(found.check().count, 14);
  EXPECT_THAT(found.check().details[0], HasSubstr("pipes grew by 4 to 6 a pass in pid 100"));
}

TEST(FdGrowth, EachTypeIsJudgedOnItsOwnAndAProcessCountsTheirSum) {
  std::vector<HookEvent> events = {made(1.0, "L1", "I1", fds(13, 4))};
  events.push_back(reset(2.0, fds(17, 6)));
  events.push_back(reset(3.0, fds(21, 5)));  // files fell back: only the pipes grew at every pass
  events.push_back(reset(4.0, fds(25, 9)));
  Found found = find(events);
  EXPECT_EQ(found.check().count, 12);
  EXPECT_EQ(found.findings.fd_growth.size(), 1u);
  events[2].fds = fds(21, 7);
  found = find(events);
  EXPECT_EQ(found.findings.fd_growth.size(), 2u);
  EXPECT_EQ(found.check().count, 12 + 5);
  EXPECT_THAT(found.check().details[1], HasSubstr("files grew by 1 to 2 a pass"));
}

TEST(FdGrowth, TheCountIsTheProcessWithTheMost) {
  std::vector<HookEvent> events = persistent_passes({13, 17, 21});
  for (const HookEvent& event : persistent_passes({10, 20, 30}, 200)) events.push_back(event);
  const Found found = find(events);
  EXPECT_EQ(found.findings.fd_growth.size(), 2u);
  EXPECT_EQ(found.check().count, 20);
  EXPECT_THAT(found.check().details[0], HasSubstr("pipes grew by 10 a pass in pid 200"));
}

TEST(FdGrowth, ALoaderMadeAgainEveryEpochIsOneSeriesWithItsKind) {
  // pytorch#91252's shape: a new persistent loader each epoch, each pass read to its end and its
  // iterator collected before the next loader's begins, but 4 pipes of it kept.
  const std::vector<HookEvent> events = {
      made(1.0, "L1", "I1", fds(11)), shutdown(1.5, "I1"), made(2.0, "L2", "I2", fds(15)), shutdown(2.5, "I2"),
      made(3.0, "L3", "I3", fds(19)), shutdown(3.5, "I3"), made(4.0, "L4", "I4", fds(23))};
  const Found found = find(events);
  EXPECT_EQ(found.check().count, 12);
  ASSERT_EQ(found.check().details.size(), 1u);
  EXPECT_THAT(found.check().details[0],
              HasSubstr("pipes grew by 4 a pass in pid 100, at each of the 3 passes of L1 (Squares, batch 16, 2 fork "
                        "workers, persistent) and the 3 loaders made like it, after the first (11, 15, 19, 23)"));
}

TEST(FdGrowth, PassesThatBeginBeforeTheLastEndedAreNoBoundary) {
  // Lightning #17641's shape: three loaders' iterators made before any is read.
  const std::vector<HookEvent> events = {made(1.0, "L1", "I1", fds(11), false),
                                         made(2.0, "L2", "I2", fds(21), false),
                                         made(3.0, "L3", "I3", fds(31), false),
                                         shutdown(4.0, "I1"),
                                         shutdown(4.1, "I2"),
                                         shutdown(4.2, "I3")};
  EXPECT_EQ(find(events).check().count, 0);
}

TEST(FdGrowth, PassesWithoutACountAreLeftOut) {
  std::vector<HookEvent> events = persistent_passes({13, 17, 21});
  events[1].fds.reset();
  EXPECT_EQ(find(events).check().count, 0);
}

TEST(FdGrowth, TheCensusCountsAPipeAsTwoPipes) {
  const std::optional<FdCounts> before = count_fds(::getpid());
  ASSERT_TRUE(before.has_value());
  int ends[2] = {-1, -1};
  ASSERT_EQ(::pipe(ends), 0);
  const std::optional<FdCounts> after = count_fds(::getpid());
  ::close(ends[0]);
  ::close(ends[1]);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->pipes - before->pipes, 2);
  EXPECT_EQ(after->files, before->files);
}

TEST(FdGrowth, ALinkIsCountedByItsType) {
  FdCounts counts;
  for (const char* link : {"pipe:[812]", "socket:[9]", "anon_inode:[eventfd]", "/dev/shm/torch_1 (deleted)",
                           "/dev/null", "pipe:[813]", "/memfd:torch (deleted)", "/data/train.idx"}) {
    counts.add(link);
  }
  EXPECT_EQ(counts.pipes, 2);
  EXPECT_EQ(counts.sockets, 1);
  EXPECT_EQ(counts.anon_inodes, 1);
  EXPECT_EQ(counts.files, 2);
  // A batch's shared memory is counted apart: it follows the batches alive, not the loop.
  EXPECT_EQ(counts.shared_memory, 2);
}

HookEvent made_beside(double t, const std::string& iterator, std::vector<std::string> threads,
                      const std::string& start_method = "fork") {
  HookEvent e = made(t, "L1", iterator, std::nullopt, false);
  e.settings.start_method = start_method;
  e.threads = std::move(threads);
  return e;
}

TEST(ForkThreads, ForkWorkersBesideAThreadOfTheProgramAreOneNoteALoaderAndNoCheck) {
  const Found found =
      find({made_beside(1.0, "I1", {"holder"}), shutdown(1.5, "I1"), made_beside(2.0, "I2", {"holder", "logger"}),
            shutdown(2.5, "I2"), made_beside(3.0, "I3", {})});
  const std::vector<ForkBesideThreads> forks = forks_beside_threads(found.python);
  ASSERT_EQ(forks.size(), 1u);
  EXPECT_EQ(forks[0].iterators, 2);
  EXPECT_EQ(forks[0].workers, 4);
  EXPECT_EQ(forks[0].sentence,
            "4 workers of L1 of pid 100 were forked from a process with 3 threads ('holder', 'logger' and the one "
            "that made the iterator); a lock held by one of them at fork time deadlocks the worker: use spawn or "
            "forkserver");
  long counted = 0;
  for (const Check& check : found.findings.checks) counted += check.count;
  EXPECT_EQ(counted, 0);
}

TEST(ForkThreads, SpawnAndForkserverWorkersBesideThreadsAreNoNote) {
  EXPECT_EQ(forks_beside_threads(find({made_beside(1.0, "I1", {"holder"}, "spawn")}).python).size(), 0u);
  EXPECT_EQ(forks_beside_threads(find({made_beside(1.0, "I1", {"holder"}, "forkserver")}).python).size(), 0u);
}

}  // namespace
}  // namespace dlreset::watch::fd_growth_test
