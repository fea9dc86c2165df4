// The watcher's reading of the Python hook's events, on made-up trees and events: parsing a
// datagram, the traceback's format, why a Python process did not load the hook, which
// generation each iterator started, and the checks beyond respawns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/watch/made_up_tree.h"
#include "watch/analysis/findings.h"
#include "watch/analysis/generations.h"
#include "watch/analysis/python_view.h"
#include "watch/analysis/worker_classifier.h"
#include "watch/hook/hook_event.h"
#include "watch/report/summary_text.h"

// The file's own namespace: the asan preset compiles the suite's files together (a unity build),
// and each names its made-up events alike.
namespace dlreset::watch::python_view_test {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

StackFrame frame(const std::string& function, int line) {
  return StackFrame{"/home/me/train.py", line, function, function + "()"};
}

HookEvent event(HookEventKind kind, double t, const std::string& loader = "L1") {
  HookEvent e = hook_event(kind, t);
  e.loader = loader;
  return e;
}

/// A loader's fields, as loader_made and iterator_made carry them.
HookEvent with_loader(HookEvent e, const std::string& dataset = "train.Squares", bool persistent = true) {
  e.settings = fork_loader(2, persistent);
  e.settings.dataset = dataset;
  return e;
}

HookEvent made(double t, const std::string& loader, const std::string& iterator, std::vector<pid_t> pids,
               const std::string& dataset = "train.Squares") {
  HookEvent e = with_loader(event(HookEventKind::iterator_made, t, loader), dataset);
  e.iterator = iterator;
  e.worker_pids = std::move(pids);
  e.stack = {frame("main", 10), frame("fit", 20)};
  return e;
}

/// An event that ends a pass which had handed out `yielded` batches and asked its workers for
/// `in_flight` more, `ready` of which were made (none known where empty).
HookEvent ended(HookEventKind kind, double t, const std::string& iterator, long yielded, long in_flight,
                std::vector<StackFrame> stack, std::optional<long> ready = std::nullopt) {
  HookEvent e = event(kind, t, "");
  e.iterator = iterator;
  e.yielded = yielded;
  e.in_flight = in_flight;
  e.ready = ready;
  e.caller = kind == HookEventKind::workers_shutdown ? stack.back().function : "";
  e.stack = std::move(stack);
  return e;
}

/// The watch of `records` and `events`, whose program printed an epoch line at each of `marks`.
WatchReport analyse(std::vector<ProcessRecord> records, std::vector<HookEvent> events, std::vector<double> marks = {}) {
  WatchResult result = made_up_watch(std::move(records), std::move(events));
  result.epoch_marks_s = std::move(marks);
  return analysed(std::move(result));
}

TEST(HookEvent, ADatagramOfTheHookIsReadWithItsStackAndRank) {
  const std::optional<HookEvent> parsed = parse_hook_event(
      R"json({"v":1,"kind":"iterator_dropped","pid":812,"t":3.5,"rank":"1","local_rank":"0","seq":7,"lost":2,)json"
      R"json("loader":"L1","dataset":"m.Squares","batch_size":64,"workers":2,"persistent":true,"start_method":"fork",)json"
      R"json("how":"None","iterator":"I3","worker_pids":[900,901],"yielded":8,"in_flight":0,"shut_down":true,)json"
      R"json("stack":[["/a/train.py",99,"<module>","main()"],["/a/train.py",51,"reset","loader._iterator = None"]],)json"
      R"json("frames_omitted":0})json",
      9.0);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->kind, HookEventKind::iterator_dropped);
  EXPECT_EQ(parsed->pid, 812);
  EXPECT_DOUBLE_EQ(parsed->time_s, 3.5);
  EXPECT_EQ(parsed->rank, 1);
  EXPECT_EQ(parsed->local_rank, 0);
  EXPECT_EQ(parsed->lost_before, 2);
  EXPECT_EQ(parsed->worker_pids, (std::vector<pid_t>{900, 901}));
  ASSERT_EQ(parsed->stack.size(), 2u);
  EXPECT_EQ(parsed->stack[1].function, "reset");
  EXPECT_EQ(format_traceback("iterator of loader L1 set to None", parsed->stack, 0, "  "),
            "  Traceback (most recent call last), iterator of loader L1 set to None:\n"
            "    File \"/a/train.py\", line 99, in <module>\n"
            "      main()\n"
            "    File \"/a/train.py\", line 51, in reset\n"
            "      loader._iterator = None\n");
}

TEST(HookEvent, WhatIsNotAHookEventIsRefusedAndWrongTypesAreLeftOut) {
  EXPECT_FALSE(parse_hook_event("not json", 1.0));
  EXPECT_FALSE(parse_hook_event(R"({"kind":"hello"})", 1.0));  // no pid
  EXPECT_FALSE(parse_hook_event(R"([1, 2, 3])", 1.0));
  const std::optional<HookEvent> odd =
      parse_hook_event(R"({"kind":"something_new","pid":5,"persistent":"yes","stack":[["f",1]]})", 4.0);
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->kind, HookEventKind::unknown);
  EXPECT_FALSE(odd->settings.persistent);
  EXPECT_TRUE(odd->stack.empty());
  EXPECT_DOUBLE_EQ(odd->time_s, 4.0);  // no clock of its own: the time it was received
}

TEST(PythonView, APythonProcessWithoutAHelloIsGivenTheLikelyReason) {
  PythonStart start;
  start.argv = {"/usr/bin/python3", "-X", "dev", "-I", "x.py"};
  EXPECT_THAT(why_no_hook(start, "/h"), HasSubstr("-I (isolated mode)"));
  start.argv = {"python3", "-Es", "-c", "pass"};
  EXPECT_THAT(why_no_hook(start, "/h"), HasSubstr("-E"));
  start.argv = {"python3", "-S", "x.py"};
  EXPECT_THAT(why_no_hook(start, "/h"), HasSubstr("-S"));
  // Flags after the script are the script's own.
  start.argv = {"python3", "x.py", "-I"};
  EXPECT_THAT(why_no_hook(start, "/h"), HasSubstr("could not be read"));
  start.environ_read = true;
  EXPECT_THAT(why_no_hook(start, "/h"), HasSubstr("no DLRESET_WATCH_SOCKET"));
  start.socket_set = true;
  start.pythonpath = "/opt/mine";
  EXPECT_THAT(why_no_hook(start, "/h"), HasSubstr("PYTHONPATH (/opt/mine) no longer holds"));
  start.pythonpath = "/h:/opt/mine";
  EXPECT_THAT(why_no_hook(start, "/h"), HasSubstr("never said hello"));
}

TEST(PythonView, EachIteratorsWorkersAreAGenerationOfTheirOwn) {
  // Two loaders start their workers within milliseconds: by the tree alone one generation of 4;
  // the hook tells them apart.
  const WatchReport a =
      analyse({program(), fork_of(201, 1.00, 9.0), fork_of(202, 1.00, 9.0), fork_of(203, 1.01, 9.0),
               fork_of(204, 1.01, 9.0)},
              {made(1.00, "L1", "I1", {201, 202}), made(1.01, "L2", "I2", {203, 204}, "train.Other")});
  ASSERT_EQ(a.generations.generations.size(), 2u);
  EXPECT_EQ(a.generations.generations[0].loader_key, "100:L1");
  EXPECT_EQ(a.generations.generations[1].loader_key, "100:L2");
  EXPECT_EQ(a.python.generation_made[1], 1u);
}

TEST(PythonView, AForkWorkerThatSaysItIsReadyIsNoPythonProcessOfItsOwn) {
  // The fork workers inherit the hook and the rank, and number their own events from 1.
  std::vector<HookEvent> events = {event(HookEventKind::hello, 0.5, ""), made(1.0, "L1", "I1", {201, 202})};
  for (const pid_t worker : {201, 202}) {
    HookEvent ready = event(HookEventKind::worker_ready, 1.3, "");
    ready.pid = worker;
    ready.parent = kProgram;
    events.push_back(ready);
  }
  long sequence = 0;
  for (HookEvent& e : events) {
    e.rank = 0;
    e.sequence = e.pid == kProgram ? ++sequence : 1;
  }
  const WatchReport a = analyse({program(), fork_of(201, 1.0, 9.0), fork_of(202, 1.0, 9.0)}, events);
  ASSERT_EQ(a.python.processes.size(), 1u);
  EXPECT_EQ(a.python.processes[0].pid, kProgram);
  EXPECT_EQ(a.python.processes[0].rank, 0);
  EXPECT_EQ(a.python.processes[0].events_lost, 0);
}

TEST(PythonView, ALoaderTakingOverFromAnotherIsNoRespawn) {
  // Validation loaders read one after the other, without persistent workers: each set ends
  // before the next starts, which the tree alone would call respawns.
  std::vector<HookEvent> events = {made(1.0, "L1", "I1", {201, 202}),
                                   ended(HookEventKind::workers_shutdown, 2.0, "I1", 8, 0, {frame("_next_data", 5)}),
                                   made(2.1, "L2", "I2", {203, 204})};
  events[1].loader = "L1";
  const WatchReport a = analyse({program(), fork_of(201, 1.0, 2.0), fork_of(202, 1.0, 2.0), fork_of(203, 2.1, 3.0),
                                 fork_of(204, 2.1, 3.0)},
                                events);
  EXPECT_EQ(a.generations.generations.size(), 2u);
  EXPECT_EQ(a.findings.check("respawns").count, 0);
}

TEST(Findings, RespawnsAreGroupedByTheStackThatStoppedTheOldWorkers) {
  const std::vector<StackFrame> reset = {frame("main", 10), frame("reset", 30)};
  std::vector<HookEvent> events = {
      made(1.0, "L1", "I1", {201, 202}), ended(HookEventKind::workers_shutdown, 2.0, "I1", 8, 0, reset),
      made(2.1, "L1", "I2", {203, 204}), ended(HookEventKind::workers_shutdown, 3.0, "I2", 8, 0, reset),
      made(3.1, "L1", "I3", {205, 206})};
  const WatchReport a = analyse({program(), fork_of(201, 1.0, 2.0), fork_of(202, 1.0, 2.0), fork_of(203, 2.1, 3.0),
                                 fork_of(204, 2.1, 3.0), fork_of(205, 3.1, 9.0), fork_of(206, 3.1, 9.0)},
                                events);
  EXPECT_EQ(a.findings.check("respawns").count, 2);
  ASSERT_EQ(a.findings.respawn_causes.size(), 1u);
  EXPECT_EQ(a.findings.respawn_causes[0].respawns, (std::vector<int>{2, 3}));
  EXPECT_EQ(a.findings.respawns_without_cause, 0);
  EXPECT_EQ(a.findings.check("live_workers").count, 2);
}

TEST(Findings, AStackSharedByTheRanksOfAJobNamesEveryRankInOrder) {
  // Two ranks run the same reset line; whichever reports first, the heading reads the same.
  PythonView view;
  for (const auto& [pid, rank] : {std::pair<pid_t, int>{kProgram + 1, 1}, {kProgram, 0}}) {
    HookEvent stop = with_loader(ended(HookEventKind::workers_shutdown, 2.0, "I1", 8, 0, {frame("reset", 30)}));
    stop.loader = "L1";
    stop.pid = pid;
    stop.rank = rank;
    view.loaders.push_back(LoaderView::of(stop));
    view.events.push_back(stop);
  }
  EXPECT_EQ(
      reset_heading(view, StackGroup{{0, 1}}),
      "workers of loader L1 (Squares, batch 16, 2 fork workers, persistent) in pids 100 (rank 0) and 101 (rank 1) "
      "shut down by reset()");
  EXPECT_EQ(reset_heading(view, StackGroup{{1, 0}}), reset_heading(view, StackGroup{{0, 1}}));
  // One process keeps the single-process heading.
  EXPECT_EQ(reset_heading(view, StackGroup{{1}}), reset_heading(view, view.events[1]));
  EXPECT_THAT(reset_heading(view, view.events[1]), HasSubstr(") in pid 100, rank 0 shut down by reset()"));
}

TEST(Findings, TheLiveWorkerPeakNamesEachLoadersShare) {
  const WatchReport a =
      analyse({program(), fork_of(201, 1.0, 5.0), fork_of(202, 1.0, 5.0), fork_of(203, 2.0, 3.0),
               fork_of(204, 2.0, 3.0), fork_of(205, 2.0, 3.0)},
              {made(1.0, "L1", "I1", {201, 202}), made(2.0, "L2", "I2", {203, 204, 205}, "train.Val")});
  EXPECT_EQ(a.findings.peak.workers, 5);
  EXPECT_DOUBLE_EQ(a.findings.peak.time_s, 2.0);
  ASSERT_EQ(a.findings.peak.by_owner.size(), 2u);
  EXPECT_EQ(a.findings.peak.by_owner[1].second, 3);
  EXPECT_EQ(a.findings.peak.by_owner[1].first, "L2 of pid 100");
}

TEST(Findings, ALoaderMadeAgainWhileAnotherOfItsKindKeepsItsWorkersLeaksThem) {
  // An eval loader made for every evaluation; the old ones keep their persistent workers.
  std::vector<HookEvent> events = {
      with_loader(event(HookEventKind::loader_made, 0.9, "L1")), made(1.0, "L1", "I1", {201, 202}),
      with_loader(event(HookEventKind::loader_made, 1.9, "L2")), made(2.0, "L2", "I2", {203, 204}),
      with_loader(event(HookEventKind::loader_made, 2.9, "L3")), made(3.0, "L3", "I3", {205, 206})};
  const WatchReport a = analyse({program(), fork_of(201, 1.0, 99.0), fork_of(202, 1.0, 99.0), fork_of(203, 2.0, 99.0),
                                 fork_of(204, 2.0, 99.0), fork_of(205, 3.0, 99.0), fork_of(206, 3.0, 99.0)},
                                events, {0.5, 1.5, 2.5, 3.5});
  // L1's two are left when L2 starts; L2's two more when L3 starts. All end before the program
  // does (at 100 s); the live count grows 0 -> 2 -> 4 -> 6 at the epoch lines.
  EXPECT_EQ(a.findings.check("leaked_workers").count, 4);
  EXPECT_EQ(a.findings.check("leaked_workers").details.size(), 3u);
  EXPECT_THAT(a.findings.check("leaked_workers").details[0],
              HasSubstr("while L1, a loader of the same kind, still had 2 alive"));
  EXPECT_EQ(a.findings.live_at_epochs, (std::vector<int>{0, 2, 4, 6}));
  EXPECT_THAT(a.findings.check("leaked_workers").details[2], HasSubstr("grew: 0 → 2 → 4 → 6"));
}

TEST(Findings, ASetReplacedAtEachEpochLineIsNoGrowth) {
  // Lightning 1.5.0's reset under load: the old set is still alive at the epoch line and ends
  // moments later; only the new set lives through the epoch.
  const WatchReport a = analyse({program(), fork_of(201, 1.0, 2.05), fork_of(202, 1.0, 2.05), fork_of(203, 2.1, 3.05),
                                 fork_of(204, 2.1, 3.05), fork_of(205, 3.1, 4.0), fork_of(206, 3.1, 4.0)},
                                {}, {0.9, 2.0, 3.0});
  EXPECT_EQ(a.findings.live_at_epochs, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(a.findings.check("leaked_workers").count, 0);
}

TEST(Findings, LoadersOfOneKindMadeTogetherLeakNothing) {
  std::vector<HookEvent> events = {with_loader(event(HookEventKind::loader_made, 0.5, "L1")),
                                   with_loader(event(HookEventKind::loader_made, 0.5, "L2")),
                                   made(1.0, "L1", "I1", {201, 202}), made(1.0, "L2", "I2", {203, 204})};
  const WatchReport a = analyse({program(), fork_of(201, 1.0, 3.0), fork_of(202, 1.0, 3.0), fork_of(203, 1.0, 3.0),
                                 fork_of(204, 1.0, 3.0)},
                                events);
  EXPECT_EQ(a.findings.check("leaked_workers").count, 0);
  EXPECT_EQ(a.findings.peak.workers, 4);
}

TEST(Findings, WorkersThatOutliveTheProgramAreLeaked) {
  const WatchReport a = analyse({program(), fork_of(201, 1.0, 150.0), fork_of(202, 1.0, 50.0)}, {});
  EXPECT_EQ(a.findings.check("leaked_workers").count, 1);
  EXPECT_THAT(a.findings.check("leaked_workers").details[0], HasSubstr("1 worker outlived the program"));
}

TEST(Findings, APassThatHandedOutNoBatchBeforeTheNextIterIsAnExtraIterator) {
  std::vector<HookEvent> events = {made(1.0, "L1", "I1", {201, 202}),
                                   ended(HookEventKind::iterator_reset, 1.2, "I1", 0, 4, {frame("fit", 40)}, 4),
                                   ended(HookEventKind::iterator_reset, 2.0, "I1", 16, 0, {frame("fit", 40)}, 0)};
  const WatchReport a = analyse({program(), fork_of(201, 1.0, 9.0), fork_of(202, 1.0, 9.0)}, events);
  EXPECT_EQ(a.findings.check("extra_iterators").count, 1);
  EXPECT_THAT(finding_verdicts(a),
              Contains("1 iterator began a pass and handed out no batch: 4 prefetched batches were "
                       "thrown away."));
  EXPECT_THAT(a.findings.check("extra_iterators").details[0], HasSubstr("reset by another iter()"));
  EXPECT_THAT(a.findings.check("extra_iterators").details[0], HasSubstr(": 4 prefetched batches were thrown away"));
  // The event that ended it, whose whole stack the report prints.
  EXPECT_EQ(a.findings.check("extra_iterators").ended, (std::vector<std::size_t>{1}));
  // A pass that was read and then reset throws nothing away that it had not handed out.
  EXPECT_EQ(a.python.passes.size(), 3u);
  EXPECT_EQ(a.python.passes[1].yielded, 16);
}

TEST(Findings, BatchesAskedForButNotKnownToBeMadeAreCountedAsUpTo) {
  // The verdict's sum over the passes: none of the 4 asked for known to be made.
  const std::string none_known_ready =
      "1 iterator began a pass and handed out no batch: up to 4 prefetched batches were thrown away: asked of the "
      "workers, none known to be ready.";
  // Dropped as its workers started: 4 asked for, none received or waiting in the queue.
  const WatchReport none = analyse({program(), fork_of(201, 1.0, 1.5), fork_of(202, 1.0, 1.5)},
                                   {made(1.0, "L1", "I1", {201, 202}), ended(HookEventKind::workers_shutdown, 1.01,
                                                                             "I1", 0, 4, {frame("__del__", 9)}, 0)});
  EXPECT_EQ(none.findings.check("extra_iterators").count, 1);
  EXPECT_THAT(finding_verdicts(none), Contains(none_known_ready));
  EXPECT_THAT(none.findings.check("extra_iterators").details[0],
              HasSubstr(": up to 4 prefetched batches were thrown away: asked of the workers, none known to be ready"));
  // One made, three still asked for; and a hook that could not tell counts none as made.
  const WatchReport one = analyse({program(), fork_of(201, 1.0, 1.5), fork_of(202, 1.0, 1.5)},
                                  {made(1.0, "L1", "I1", {201, 202}),
                                   ended(HookEventKind::iterator_reset, 1.2, "I1", 0, 4, {frame("fit", 40)}, 1)});
  EXPECT_THAT(one.findings.check("extra_iterators").details[0],
              HasSubstr(": 1 prefetched batch was thrown away, and up to 3 more asked of the workers"));
  const WatchReport unknown = analyse({program(), fork_of(201, 1.0, 1.5), fork_of(202, 1.0, 1.5)},
                                      {made(1.0, "L1", "I1", {201, 202}),
                                       ended(HookEventKind::iterator_reset, 1.2, "I1", 0, 4, {frame("fit", 40)})});
  EXPECT_THAT(finding_verdicts(unknown), Contains(none_known_ready));
}

TEST(Findings, ThePeakNamesALoaderWhoseNextPassStartedBeforeTheLastOnesWorkersEnded) {
  // A loader without persistent workers read by length: the last pass's iterator is collected
  // only after the next iter() has started the next pass's workers.
  HookEvent first = made(1.0, "L1", "I1", {201, 202});
  first.settings.persistent = false;
  HookEvent second = made(2.0, "L1", "I2", {203, 204});
  second.settings.persistent = false;
  const WatchReport a = analyse({program(), fork_of(201, 1.0, 2.1), fork_of(202, 1.0, 2.1), fork_of(203, 2.0, 3.0),
                                 fork_of(204, 2.0, 3.0)},
                                {first, second});
  EXPECT_EQ(a.findings.peak.workers, 4);
  EXPECT_EQ(a.findings.peak.overlapping, (std::vector<std::string>{"L1"}));
  EXPECT_EQ(overlap_cause(a.findings.peak),
            "the next pass of L1 (not persistent) started its workers before the last pass's workers had ended");
  EXPECT_EQ(a.generations.respawns.size(), 0u);
  // Two sets of a persistent loader alive at once are no such overlap: none is named.
  first.settings.persistent = second.settings.persistent = true;
  const WatchReport kept = analyse({program(), fork_of(201, 1.0, 2.1), fork_of(202, 1.0, 2.1), fork_of(203, 2.0, 3.0),
                                    fork_of(204, 2.0, 3.0)},
                                   {first, second});
  EXPECT_EQ(kept.findings.peak.workers, 4);
  EXPECT_EQ(kept.findings.peak.overlapping.size(), 0u);
}

TEST(Findings, ASetEpochAfterThePassDrewItsOrderIsLate) {
  HookEvent late = event(HookEventKind::set_epoch, 1.1, "");
  late.sampler = "S1";
  late.epoch = 2;
  late.pending_iterator = "I1";
  late.pending_epoch = 0;
  late.stack = {frame("on_advance_start", 70)};
  HookEvent in_time = late;
  in_time.time_s = 3.0;
  in_time.epoch = 3;
  in_time.pending_iterator.clear();  // the pass before had been read: nothing pending
  in_time.pending_epoch.reset();
  const WatchReport a = analyse({program(), fork_of(201, 1.0, 9.0), fork_of(202, 1.0, 9.0)},
                                {made(1.0, "L1", "I1", {201, 202}), late, in_time});
  EXPECT_EQ(a.findings.check("late_set_epoch").count, 1);
  EXPECT_THAT(a.findings.check("late_set_epoch").details[0], HasSubstr("set_epoch(2) on sampler S1"));
  EXPECT_THAT(a.findings.check("late_set_epoch").details[0], HasSubstr("replays epoch 0's order"));
}

TEST(WorkerClassifier, AShellsSubshellIsNotAWorker) {
  ProcessRecord shell = program();
  shell.cmdline = "sh run.sh";
  shell.comm = "sh";
  ProcessRecord subshell = fork_of(201, 0.1, 0.2);
  subshell.cmdline = "sh run.sh";
  subshell.comm = "sh";
  std::vector<ProcessRecord> records = {shell, subshell};
  classify_processes(records);
  EXPECT_EQ(records[1].role, ProcessRole::other);
  EXPECT_EQ(records[1].start, WorkerStart::none);
}

}  // namespace
}  // namespace dlreset::watch::python_view_test
