// The watcher's reasoning on made-up process trees: which processes are workers, how workers
// group into generations, and when a generation is a respawn.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tests/watch/made_up_tree.h"
#include "watch/analysis/generations.h"
#include "watch/analysis/watch_report.h"
#include "watch/analysis/worker_classifier.h"
#include "watch/report/summary_text.h"
#include "watch/report/timeline_json.h"

namespace dlreset::watch {
namespace {

using ::testing::HasSubstr;

ProcessRecord exec_child(pid_t pid, pid_t parent, const std::string& cmdline, double start) {
  ProcessRecord record;
  record.pid = pid;
  record.parent = parent;
  record.start_s = start;
  record.end_s = start + 0.5;
  record.exec_seen = true;
  record.cmdline = cmdline;
  return record;
}

GenerationReport generations_of(std::vector<ProcessRecord> records, GenerationOptions options = {}) {
  classify_processes(records);
  return find_generations(records, options);
}

TEST(WorkerClassifier, ForksOfTheTrainerAreForkWorkers) {
  std::vector<ProcessRecord> records = {program(), fork_of(101, 1.0, 2.0), fork_of(102, 1.0, 2.0)};
  classify_processes(records);
  for (std::size_t i = 1; i < records.size(); ++i) {
    EXPECT_EQ(records[i].role, ProcessRole::worker) << records[i].pid;
    EXPECT_EQ(records[i].start, WorkerStart::fork) << records[i].pid;
  }
}

TEST(WorkerClassifier, SpawnedInterpretersAreWorkersAndTheTrackerIsAHelper) {
  std::vector<ProcessRecord> records = {
      program(),
      exec_child(101, kProgram, "/usr/bin/python3 -B -c from multiprocessing.resource_tracker import main;main(6)",
                 1.0),
      exec_child(102, kProgram,
                 "/usr/bin/python3 -c from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=7, "
                 "pipe_handle=9) --multiprocessing-fork",
                 1.1),
      exec_child(103, kProgram, "build/bin/dlreset --dlreset-worker train:0", 1.2),
      exec_child(104, kProgram, "nvidia-smi", 1.3)};
  classify_processes(records);
  EXPECT_EQ(records[1].role, ProcessRole::helper);
  EXPECT_EQ(records[2].start, WorkerStart::spawn);
  EXPECT_EQ(records[3].start, WorkerStart::dlreset_spawn);
  EXPECT_EQ(records[4].role, ProcessRole::other);
  EXPECT_EQ(records[4].start, WorkerStart::none);
}

TEST(WorkerClassifier, TheForkserversForksAreWorkersButAWorkersOwnChildIsNot) {
  std::vector<ProcessRecord> records = {
      program(),
      exec_child(101, kProgram, "/usr/bin/python3 -c from multiprocessing.forkserver import main; main(8, 9)", 1.0),
      fork_of(102, 1.1, 3.0, 101), fork_of(103, 1.2, 2.0, 102)};
  records[1].end_s.reset();
  classify_processes(records);
  EXPECT_EQ(records[1].role, ProcessRole::helper);
  EXPECT_EQ(records[2].start, WorkerStart::forkserver);
  EXPECT_EQ(records[3].role, ProcessRole::other);
}

TEST(WorkerClassifier, AProgramRunThroughAShellOwnsTheWorkersItForks) {
  std::vector<ProcessRecord> records = {program(), exec_child(101, kProgram, "/usr/bin/python3 fit.py", 0.5),
                                        fork_of(102, 1.0, 2.0, 101)};
  records[0].cmdline = "sh -c python3 fit.py";
  records[2].cmdline = "/usr/bin/python3 fit.py";
  classify_processes(records);
  EXPECT_EQ(records[1].role, ProcessRole::program);
  EXPECT_EQ(records[2].role, ProcessRole::worker);
}

TEST(WorkerClassifier, ASubshellForkedBeforeTheShellRanExecIntoPythonIsNoWorker) {
  // A wrapper that runs `X=$(...)` and then execs python: its subshell is a fork of bash, whose
  // record is an image of bash; the root it forked from runs python by the end.
  std::vector<ProcessRecord> records = {program(), fork_of(101, 0.1, 0.2), fork_of(102, 1.0, 2.0),
                                        fork_of(103, 1.0, 2.0)};
  records[1].cmdline = "bash run.sh python3 train.py";
  records[1].comm = "bash";
  classify_processes(records);
  EXPECT_EQ(records[1].role, ProcessRole::other);
  EXPECT_EQ(records[2].role, ProcessRole::worker);
  EXPECT_EQ(records[3].role, ProcessRole::worker);
  EXPECT_EQ(generations_of(records).workers, 2);
}

TEST(Generations, PersistentWorkersAreOneGenerationAndNoRespawn) {
  const GenerationReport report = generations_of({program(), fork_of(101, 1.00, 9.0), fork_of(102, 1.01, 9.0)});
  EXPECT_EQ(report.workers, 2);
  ASSERT_EQ(report.generations.size(), 1u);
  EXPECT_EQ(report.generations[0].members.size(), 2u);
  EXPECT_DOUBLE_EQ(report.generations[0].cpu_s, 0.5);
  EXPECT_EQ(report.respawns.size(), 0u);
}

/// Lightning 1.5.0 on one loader: the old pair ends at 3 s and 5 s, and a new pair starts `late`
/// seconds after (its second worker a millisecond after its first), at every epoch.
std::vector<ProcessRecord> a_pair_replaced_every_epoch(double late) {
  return {program(),
          fork_of(101, 1.0, 3.0),
          fork_of(102, 1.0, 3.0),
          fork_of(103, 3.0 + late, 5.0),
          fork_of(104, 3.001 + late, 5.0),
          fork_of(105, 5.0 + late, 7.0),
          fork_of(106, 5.001 + late, 7.0)};
}

TEST(Generations, ASetReplacedEveryEpochIsARespawnEachTime) {
  const GenerationReport report = generations_of(a_pair_replaced_every_epoch(0.001));
  EXPECT_EQ(report.workers, 6);
  EXPECT_EQ(report.generations.size(), 3u);
  ASSERT_EQ(report.respawns.size(), 2u);
  EXPECT_EQ(report.respawns[0].generation, 2);
  EXPECT_EQ(report.respawns[0].replaced, 2);
  EXPECT_EQ(report.respawns[1].started, 2);
  EXPECT_DOUBLE_EQ(report.respawns[1].time_s, 5.001);
}

TEST(Generations, ANewSetOfALoaderWithoutPersistentWorkersReplacesNothing) {
  // The same lives as above, but the hook named a loader without persistent workers: every
  // iter() starts new workers by design, and the ones that ended were not meant to last.
  std::vector<ProcessRecord> records = a_pair_replaced_every_epoch(0.001);
  for (std::size_t i = 1; i < records.size(); ++i) {
    records[i].loader_key = "100:L1";
    records[i].iterator_key = "100:I" + std::to_string((i + 1) / 2);
    records[i].meant_to_last = false;
  }
  EXPECT_EQ(generations_of(records).generations.size(), 3u);
  EXPECT_EQ(generations_of(records).respawns.size(), 0u);
  // A persistent loader's set replaced in the same way is a respawn each time.
  for (std::size_t i = 1; i < records.size(); ++i) records[i].meant_to_last = true;
  EXPECT_EQ(generations_of(records).respawns.size(), 2u);
}

TEST(Generations, TwoLoadersStartedApartAreTwoGenerationsWithoutARespawn) {
  // Lightning 1.5.1: the validation workers start at the sanity check, the training workers
  // seconds later, and both live to the end.
  const GenerationReport report = generations_of({program(), fork_of(101, 1.0, 20.0), fork_of(102, 1.0, 20.0),
                                                  fork_of(103, 4.0, 20.0), fork_of(104, 4.0, 20.0)});
  EXPECT_EQ(report.generations.size(), 2u);
  EXPECT_EQ(report.respawns.size(), 0u);
}

TEST(Generations, AWorkerStartedAfterOneOfItsSetEndedStartsANewGeneration) {
  // Within the window, but the first set had already lost a member: not one set.
  const GenerationReport report = generations_of({program(), fork_of(101, 1.0, 1.2), fork_of(102, 1.3, 4.0)});
  EXPECT_EQ(report.generations.size(), 2u);
  EXPECT_EQ(report.respawns.size(), 1u);
}

TEST(Generations, AStartReadLateByPollingStillCountsAsAfterTheEnd) {
  // Polling dates a start no later than the look before it was found, so up to one interval
  // early: the replacement can read as started just before the old worker ended. The
  // uncertainty keeps it a new generation.
  GenerationOptions options;
  options.start_uncertainty_s = 0.01;
  const GenerationReport report =
      generations_of({program(), fork_of(101, 1.0, 3.0), fork_of(102, 2.995, 5.0)}, options);
  EXPECT_EQ(report.generations.size(), 2u);
  EXPECT_EQ(report.respawns.size(), 1u);
}

TEST(Generations, WorkersOfDifferentParentsNeverShareAGeneration) {
  const GenerationReport report =
      generations_of({program(), exec_child(110, kProgram, "/usr/bin/python3 rank1.py", 0.1), fork_of(101, 1.0, 2.0),
                      fork_of(111, 1.0, 2.0, 110)});
  EXPECT_EQ(report.generations.size(), 2u);
  EXPECT_EQ(report.respawns.size(), 0u);
}

TEST(WatchReport, TheVerdictSaysHowOftenWorkersWereReplaced) {
  WatchResult result;
  result.processes = a_pair_replaced_every_epoch(0.1);
  result.processes[0].end_s = 7.5;
  result.origin_s = 0.0;
  result.end_s = 7.5;
  result.mode = WatchMode::connector;
  result.epoch_marks_s = {0.9, 3.0, 5.0};
  const WatchReport report = analyse_watch(result, {"python3", "train.py"}, "^Epoch", 1.0);
  EXPECT_EQ(verdict(report),
            "2 workers were replaced 2 times, every 2.05 s: the loop is not keeping persistent workers; the "
            "replacements used 1.00 s of CPU, start-up and data set loads included.");
  EXPECT_EQ(epoch_at(report, 3.1), 1);
  EXPECT_EQ(epoch_at(report, 0.5), -1);
  const nlohmann::json events = events_json(report);
  EXPECT_EQ(events["events"].size(), 12u);  // a spawn and an exit per worker
  EXPECT_EQ(events["epochs"].size(), 3u);
  EXPECT_THAT(summary_text(report), HasSubstr("epoch 2 from 5.00 s: 1 respawn (2 workers replaced)"));
}

}  // namespace
}  // namespace dlreset::watch
