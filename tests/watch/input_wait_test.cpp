// The loop's waits for data on made-up trees and events: reading pass_waits and worker_ready,
// the cause of each pass's first-batch wait, the epoch gaps, the sums and fractions, the summary's
// lines, the JSON and the gates that hold them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/watch/made_up_tree.h"
#include "watch/analysis/checks/checks.h"
#include "watch/analysis/findings.h"
#include "watch/analysis/input_wait.h"
#include "watch/analysis/python_view.h"
#include "watch/analysis/watch_report.h"
#include "watch/cli/watch_options.h"
#include "watch/hook/hook_event.h"
#include "watch/report/report_json.h"
#include "watch/report/summary_text.h"

// The file's own namespace: the asan preset compiles the suite's files together (a unity build),
// and each names its made-up events alike.
namespace dlreset::watch::input_wait_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

HookEvent event(HookEventKind kind, double t, const std::string& iterator = "", pid_t pid = kProgram) {
  HookEvent e = hook_event(kind, t, pid);
  e.iterator = iterator;
  return e;
}

HookEvent made(double t, const std::string& iterator, std::vector<pid_t> workers, bool persistent) {
  HookEvent e = event(HookEventKind::iterator_made, t, iterator);
  e.loader = "L1";
  e.settings = fork_loader(static_cast<int>(workers.size()), persistent);
  e.worker_pids = std::move(workers);
  e.stack = {StackFrame{"/home/me/train.py", 10, "main", "main()"}};
  return e;
}

HookEvent ready(pid_t worker, double t) {
  HookEvent e = event(HookEventKind::worker_ready, t, "", worker);
  e.parent = kProgram;
  return e;
}

HookEvent shutdown(double t, const std::string& iterator) {
  HookEvent e = event(HookEventKind::workers_shutdown, t, iterator);
  e.caller = "reset_like_lightning_1_5_0";
  e.yielded = 10;
  e.in_flight = 0;
  e.stack = {StackFrame{"/home/me/train.py", 51, "reset_like_lightning_1_5_0", "loader._iterator._shutdown_workers()"}};
  return e;
}

/// A pass of `iterator` begun at `begun`: its first batch returned `first_batch_s` later after a
/// wait of `first_wait_s`, then `steady` more waits of `each_s`, and `step_s` of steps in all.
HookEvent waits(const std::string& iterator, long pass, double begun, double first_batch_s, double first_wait_s,
                long steady, double each_s, double step_s, double last_batch) {
  HookEvent e = event(HookEventKind::pass_waits, last_batch + 0.01, iterator);
  e.loader = "L1";
  e.waits.pass = pass;
  e.waits.thread = "MainThread";
  e.waits.begun_s = begun;
  e.waits.batches = steady + 1;
  e.waits.first_batch_s = first_batch_s;
  e.waits.first_wait_s = first_wait_s;
  e.waits.wait_s = first_wait_s + static_cast<double>(steady) * each_s;
  e.waits.step_s = step_s;
  e.waits.last_batch_s = last_batch;
  e.waits.max_wait_s = each_s;
  // bucket = int(wait_s * 1e6).bit_length(), as the hook counts them
  long micros = static_cast<long>(each_s * 1e6);
  int bucket = 0;
  while (micros > 0) {
    ++bucket;
    micros >>= 1;
  }
  e.waits.hist = {{bucket, steady}};
  e.waits.end = "shutdown";
  return e;
}

struct Watched {
  WatchReport report;
  const InputWait& wait() const { return report.findings.input_wait; }
};

/// The watch of `records` and `events`. Each process's events are numbered in their order; an
/// event's `sequence`, where a test set it, is the count of that process's events lost before it.
Watched analyse(std::vector<ProcessRecord> records, std::vector<HookEvent> events, std::string hook = "on") {
  std::map<pid_t, long> numbered;
  for (HookEvent& e : events) {
    numbered[e.pid] += 1 + e.sequence;
    e.sequence = numbered[e.pid];
  }
  WatchResult result = made_up_watch(std::move(records), std::move(events), 20.0);
  result.python_hook = std::move(hook);
  return Watched{analysed(std::move(result))};
}

/// Two passes of a persistent loader whose workers a reset stopped between them (Lightning
/// 1.5.0's bug): each pass starts new workers, and the second is a respawn.
Watched respawned() {
  return analyse({program(), fork_of(201, 2.0, 6.0), fork_of(202, 2.0, 6.0), fork_of(203, 6.2, 10.0),
                  fork_of(204, 6.2, 10.0)},
                 {made(2.0, "I1", {201, 202}, true), ready(201, 2.5), ready(202, 2.6),
                  waits("I1", 1, 2.0, 1.0, 0.9, 10, 0.06, 2.5, 5.5), shutdown(5.8, "I1"),
                  made(6.2, "I2", {203, 204}, true), ready(203, 6.8), ready(204, 6.9),
                  waits("I2", 1, 6.2, 1.0, 0.8, 5, 0.06, 2.0, 9.5)});
}

TEST(InputWait, PassWaitsAreReadWithEveryField) {
  const std::optional<HookEvent> parsed = parse_hook_event(
      R"json({"v":1,"kind":"pass_waits","pid":812,"t":9.5,"rank":"1","seq":9,"lost":0,"iterator":"I3",)json"
      R"json("loader":"L1","pass":2,"thread":"Thread-1","main_thread":false,"other_thread_calls":3,"begun":4.0,)json"
      R"json("batches":12,"first_batch_s":1.25,"first_wait_s":1.0,"wait_s":1.5,"step_s":6.0,"last_batch":9.4,)json"
      R"json("max_wait_s":0.2,"hist":[[17,8],[18,3]],"end":"reset","stopped":true})json",
      10.0);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->kind, HookEventKind::pass_waits);
  EXPECT_EQ(parsed->iterator, "I3");
  EXPECT_EQ(parsed->waits.pass, 2);
  EXPECT_EQ(parsed->waits.thread, "Thread-1");
  EXPECT_FALSE(parsed->waits.main_thread);
  EXPECT_EQ(parsed->waits.other_thread_calls, 3);
  EXPECT_EQ(parsed->waits.batches, 12);
  EXPECT_DOUBLE_EQ(*parsed->waits.first_batch_s, 1.25);
  EXPECT_DOUBLE_EQ(*parsed->waits.first_wait_s, 1.0);
  EXPECT_DOUBLE_EQ(parsed->waits.wait_s, 1.5);
  EXPECT_DOUBLE_EQ(parsed->waits.step_s, 6.0);
  EXPECT_DOUBLE_EQ(*parsed->waits.last_batch_s, 9.4);
  EXPECT_EQ(parsed->waits.hist, (std::vector<std::pair<int, long>>{{17, 8}, {18, 3}}));
  EXPECT_EQ(parsed->waits.end, "reset");
}

TEST(InputWait, APassWithoutABatchHasNoFirstBatch) {
  const std::optional<HookEvent> parsed = parse_hook_event(
      R"json({"kind":"pass_waits","pid":812,"iterator":"I1","loader":null,"pass":1,"begun":4.0,"batches":0,)json"
      R"json("first_batch_s":null,"first_wait_s":null,"wait_s":0.0,"step_s":0.0,"last_batch":null,"hist":[]})json",
      10.0);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->loader, "");
  EXPECT_FALSE(parsed->waits.first_batch_s);
  EXPECT_FALSE(parsed->waits.last_batch_s);
}

TEST(InputWait, APassWaitsWithoutWhatTheAccountingNeedsIsNotAnEvent) {
  const char* const kBroken[] = {
      R"json({"kind":"pass_waits","pid":1,"iterator":"I1","pass":1,"begun":1.0,"batches":2,"step_s":1.0})json",
      R"json({"kind":"pass_waits","pid":1,"pass":1,"begun":1.0,"batches":2,"wait_s":1.0,"step_s":1.0})json",
      R"json({"kind":"pass_waits","pid":1,"iterator":"I1","pass":0,"begun":1.0,"batches":2,"wait_s":1,"step_s":1})json",
      R"json({"kind":"pass_waits","pid":1,"iterator":"I1","pass":1,"begun":1.0,"batches":2,"wait_s":-1,"step_s":1})json",
      R"json({"kind":"pass_waits","pid":1,"iterator":"I1","pass":1,"begun":1,"batches":2,"wait_s":1,"step_s":1,"hist":[[99,1]]})json",
  };
  int refused = 0;
  for (const char* datagram : kBroken) refused += !parse_hook_event(datagram, 1.0).has_value();
  EXPECT_EQ(refused, 5);
}

TEST(InputWait, WorkerReadyNamesItsWorkerAndItsParent) {
  const std::optional<HookEvent> parsed =
      parse_hook_event(R"json({"kind":"worker_ready","pid":901,"t":3.0,"seq":1,"worker_id":1,"parent":812})json", 9.0);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->kind, HookEventKind::worker_ready);
  EXPECT_EQ(parsed->worker_id, 1);
  EXPECT_EQ(parsed->parent, 812);
}

TEST(InputWait, EachPassThatStartedNewWorkersNamesItsGenerationStartUpAndTheResetBeforeIt) {
  const Watched watched = respawned();
  ASSERT_EQ(watched.wait().passes.size(), 2u);
  const PassWait& first = watched.wait().passes[0];
  const PassWait& second = watched.wait().passes[1];
  EXPECT_EQ(first.cause, WaitCause::new_workers);
  EXPECT_EQ(second.cause, WaitCause::new_workers);
  EXPECT_EQ(first.generation, 1);
  EXPECT_EQ(second.generation, 2);
  EXPECT_NEAR(*first.startup_s, 0.6, 1e-9);
  EXPECT_NEAR(*second.startup_s, 0.7, 1e-9);
  EXPECT_FALSE(first.reset_event);
  ASSERT_TRUE(second.reset_event);
  EXPECT_EQ(watched.report.python.events[*second.reset_event].kind, HookEventKind::workers_shutdown);
  EXPECT_TRUE(first.pass_view);
  EXPECT_TRUE(second.pass_view);
  EXPECT_TRUE(watched.wait().incomplete.empty());
}

TEST(InputWait, TheEpochGapSplitsIntoShutdownStartUpAndFirstFetch) {
  const Watched watched = respawned();
  EXPECT_FALSE(watched.wait().passes[0].gap);
  ASSERT_TRUE(watched.wait().passes[1].gap);
  const EpochGap& gap = *watched.wait().passes[1].gap;
  EXPECT_NEAR(gap.total_s, 1.7, 1e-9);        // last batch at 5.5, the next first batch at 7.2
  EXPECT_NEAR(gap.shutdown_s, 0.5, 1e-9);     // the old workers ended at 6.0
  EXPECT_NEAR(gap.startup_s, 0.7, 1e-9);      // forked at 6.2, the last ready at 6.9
  EXPECT_NEAR(gap.first_fetch_s, 0.5, 1e-9);  // the rest
}

TEST(InputWait, TheSumsSplitTheWaitByCauseAndGiveTheFraction) {
  const Watched watched = respawned();
  const WaitTotals& job = watched.wait().job;
  EXPECT_EQ(job.passes, 2);
  EXPECT_NEAR(job.wait_s, 0.9 + 0.6 + 0.8 + 0.3, 1e-9);
  EXPECT_NEAR(job.step_s, 4.5, 1e-9);
  EXPECT_NEAR(job.fraction(), 2.6 / 7.1, 1e-9);
  EXPECT_NEAR(job.new_workers_s, 1.7, 1e-9);
  EXPECT_NEAR(job.steady_s, 0.9, 1e-9);
  EXPECT_EQ(job.new_worker_starts, 2);
  EXPECT_EQ(job.respawn_starts, 1);
  EXPECT_NEAR(*job.median_first_batch_s(), 1.0, 1e-9);
  // 15 waits of 60 ms, all in bucket 16 ([32.8, 65.5) ms): the quantiles are the longest wait.
  EXPECT_NEAR(*job.steady_quantile_s(0.5), 0.06, 1e-9);
  ASSERT_EQ(watched.wait().processes.size(), 1u);
  ASSERT_EQ(watched.wait().loaders.size(), 1u);
  EXPECT_NEAR(watched.wait().loaders[0].totals.wait_s, job.wait_s, 1e-9);
}

TEST(InputWait, APersistentIteratorsResetKeepsItsWorkers) {
  HookEvent reset = event(HookEventKind::iterator_reset, 6.0, "I1");
  reset.loader = "L1";
  const Watched watched = analyse({program(), fork_of(201, 2.0, std::nullopt), fork_of(202, 2.0, std::nullopt)},
                                  {made(2.0, "I1", {201, 202}, true), waits("I1", 1, 2.0, 1.0, 0.9, 10, 0.01, 3.0, 5.5),
                                   reset, waits("I1", 2, 6.0, 0.2, 0.15, 10, 0.01, 3.0, 9.5)});
  ASSERT_EQ(watched.wait().passes.size(), 2u);
  EXPECT_EQ(watched.wait().passes[1].cause, WaitCause::workers_kept);
  EXPECT_NEAR(watched.wait().job.workers_kept_s, 0.15, 1e-9);
  ASSERT_TRUE(watched.wait().passes[1].gap);
  EXPECT_NEAR(watched.wait().passes[1].gap->shutdown_s, 0.0, 1e-9);
  EXPECT_NEAR(watched.wait().passes[1].gap->startup_s, 0.0, 1e-9);
  EXPECT_NEAR(watched.wait().passes[1].gap->first_fetch_s, 0.7, 1e-9);
}

TEST(InputWait, APassTheHookSawBeginWithoutItsWaitsMakesTheAccountingIncomplete) {
  const Watched watched =
      analyse({program(), fork_of(201, 2.0, 6.0), fork_of(202, 2.0, 6.0)}, {made(2.0, "I1", {201, 202}, false)});
  ASSERT_EQ(watched.wait().incomplete.size(), 1u);
  EXPECT_THAT(watched.wait().incomplete[0], HasSubstr("1 pass the hook saw begin sent no pass_waits"));
  const Check& check = watched.report.findings.check("input_wait");
  EXPECT_FALSE(check.seen);
  EXPECT_THAT(check.unseen_why, HasSubstr("incomplete"));
}

TEST(InputWait, LostEventsMakeTheAccountingIncomplete) {
  std::vector<HookEvent> events = {made(2.0, "I1", {201, 202}, true),
                                   waits("I1", 1, 2.0, 1.0, 0.9, 10, 0.06, 2.5, 5.5)};
  events.back().sequence = 3;  // three of the process's events never came
  const Watched watched = analyse({program(), fork_of(201, 2.0, 6.0), fork_of(202, 2.0, 6.0)}, events);
  ASSERT_EQ(watched.wait().incomplete.size(), 1u);
  EXPECT_THAT(watched.wait().incomplete[0], HasSubstr("lost 3 of its hook's events"));
  EXPECT_FALSE(watched.report.findings.check("first_batch_s").seen);
}

TEST(InputWait, TheSummarySaysWhereTheWaitWent) {
  const std::string text = summary_text(respawned().report);
  EXPECT_THAT(text, HasSubstr("input wait: the training loop waited 37% of its time for data (2.60 of 7.10 s): "
                              "1.70 s at 2 epoch starts that started new workers (1 of them the respawn above), 0.90 "
                              "s in steady state; first batch 1.00 s (median)"));
  EXPECT_THAT(text, HasSubstr("2 passes started new workers (generations 1, 2), start-up 0.70 s (median, fork to "
                              "worker_ready), made necessary by the reset at train.py:51 in "
                              "reset_like_lightning_1_5_0"));
  EXPECT_THAT(text, HasSubstr("1 epoch gap between passes, 1.70 s in all: 0.50 s old workers' shutdown, 0.70 s new "
                              "workers' start, 0.50 s first fetch"));
}

TEST(InputWait, AWellFedLoopIsSaidInOneLine) {
  const Watched watched =
      analyse({program(), fork_of(201, 2.0, std::nullopt)},
              {made(2.0, "I1", {201}, true), waits("I1", 1, 2.0, 0.1, 0.05, 100, 0.0001, 10.0, 12.0)});
  const std::string text = summary_text(watched.report);
  EXPECT_THAT(text, HasSubstr("input wait: the training loop waited 1% of its time for data (0.06 of 10.06 s): it was "
                              "well fed; first batch 0.10 s (median)\n  "));
  EXPECT_THAT(text, Not(HasSubstr("steady state:")));
}

TEST(InputWait, ALoaderReadOnAnotherThreadIsNamed) {
  std::vector<HookEvent> events = {made(2.0, "I1", {201}, true), waits("I1", 1, 2.0, 0.1, 0.05, 10, 0.01, 1.0, 4.0)};
  events.back().waits.main_thread = false;
  events.back().waits.thread = "Prefetcher";
  const Watched watched = analyse({program(), fork_of(201, 2.0, std::nullopt)}, events);
  EXPECT_THAT(summary_text(watched.report),
              HasSubstr("L1 of pid 100 was read on thread 'Prefetcher', not the main thread"));
}

TEST(InputWait, ARankThatWaitsFarMoreThanTheOthersIsAnInputStraggler) {
  std::vector<HookEvent> events;
  for (const auto& [pid, rank, wait] :
       std::vector<std::tuple<pid_t, int, double>>{{300, 0, 0.05}, {301, 1, 0.4}, {302, 2, 0.06}}) {
    HookEvent pass = waits("I1", 1, 2.0, 0.1, 0.05, 100, wait / 100.0, 1.0, 4.0);
    pass.pid = pid;
    pass.rank = rank;
    events.push_back(pass);
  }
  const Watched watched = analyse({program()}, events);
  ASSERT_EQ(watched.wait().processes.size(), 3u);
  EXPECT_EQ(watched.wait().processes[1].rank, 1);
  EXPECT_THAT(summary_text(watched.report),
              HasSubstr("rank 1 (pid 301) waited 31% of its time, the other ranks 9-10%: rank 1 (pid 301) is an input "
                        "straggler"));
}

TEST(InputWait, TheJsonHasEveryPassWithItsCauseAndGap) {
  const nlohmann::json json = report_json(respawned().report);
  EXPECT_EQ(json["schema_version"], 3);
  const nlohmann::json& wait = json["input_wait"];
  EXPECT_EQ(wait["complete"], true);
  ASSERT_EQ(wait["passes"].size(), 2u);
  EXPECT_EQ(wait["passes"][1]["cause"], "new_workers");
  EXPECT_EQ(wait["passes"][1]["generation"], 2);
  EXPECT_NEAR(wait["passes"][1]["gap"]["startup_s"].get<double>(), 0.7, 1e-9);
  EXPECT_TRUE(wait["passes"][0]["gap"].is_null());
  EXPECT_NEAR(wait["job"]["fraction"].get<double>(), 2.6 / 7.1, 1e-9);
  EXPECT_NEAR(wait["job"]["first_wait_new_workers_s"].get<double>(), 1.7, 1e-9);
  EXPECT_EQ(wait["ranks"].size(), 1u);
  EXPECT_EQ(wait["loaders"].size(), 1u);
  long measured = 0;  // input_wait, first_batch_s and worker_memory
  for (const auto& check : json["checks"]) measured += check.contains("measure");
  EXPECT_EQ(measured, 3);
}

/// `pass` with `count` head-of-line blocked waits that took `total_s` in all, the longest `worst`.
HookEvent blocked(HookEvent pass, long count, double total_s, BlockedWait worst) {
  pass.waits.blocked_waits = count;
  pass.waits.blocked_wait_s = total_s;
  pass.waits.worst_blocked = worst;
  return pass;
}

BlockedWait worst_wait(long batch, double wait_s, long ready, std::optional<int> worker) {
  BlockedWait worst;
  worst.batch = batch;
  worst.wait_s = wait_s;
  worst.ready = ready;
  worst.worker = worker;
  return worst;
}

/// Two ranks. Rank 0 reads L1 in two passes of 10 waits of 60 ms, 3 and 2 of them blocked, and
/// L2 in one, 1 blocked; rank 1 reads L1, none blocked.
Watched blocked_ranks() {
  std::vector<HookEvent> events = {
      blocked(waits("I1", 1, 2.0, 0.1, 0.05, 10, 0.06, 1.0, 4.0), 3, 0.2, worst_wait(5, 0.08, 2, 0)),
      blocked(waits("I1", 2, 4.5, 0.1, 0.05, 10, 0.06, 1.0, 6.0), 2, 0.15, worst_wait(9, 0.09, 3, 1)),
      blocked(waits("I2", 1, 2.0, 0.1, 0.05, 10, 0.06, 1.0, 4.0), 1, 0.07, worst_wait(4, 0.07, 1, std::nullopt)),
      waits("I1", 1, 2.0, 0.1, 0.05, 10, 0.06, 1.0, 4.0)};
  events[2].loader = "L2";
  for (std::size_t e = 0; e < events.size(); ++e) {
    events[e].pid = e < 3 ? 300 : 301;
    events[e].rank = e < 3 ? 0 : 1;
  }
  return analyse({program()}, events);
}

TEST(InputWaitBlocking, APassesBlockedWaitsAreReadWithTheLongest) {
  const std::optional<HookEvent> parsed = parse_hook_event(
      R"json({"kind":"pass_waits","pid":812,"iterator":"I1","pass":2,"begun":4.0,"batches":12,"wait_s":1.5,)json"
      R"json("step_s":6.0,"hist":[[16,11]],"blocked_waits":4,"blocked_wait_s":0.21,)json"
      R"json("worst_blocked":{"batch":17,"wait_s":0.06,"ready":3,"worker":0}})json",
      10.0);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->waits.blocked_waits, 4);
  EXPECT_DOUBLE_EQ(parsed->waits.blocked_wait_s, 0.21);
  ASSERT_TRUE(parsed->waits.worst_blocked);
  EXPECT_EQ(parsed->waits.worst_blocked->batch, 17);
  EXPECT_DOUBLE_EQ(parsed->waits.worst_blocked->wait_s, 0.06);
  EXPECT_EQ(parsed->waits.worst_blocked->ready, 3);
  EXPECT_EQ(parsed->waits.worst_blocked->worker, 0);

  // A worker the hook could not name is null; a hook that did not count them sent none.
  const std::optional<HookEvent> unnamed = parse_hook_event(
      R"json({"kind":"pass_waits","pid":1,"iterator":"I1","pass":1,"begun":1.0,"batches":3,"wait_s":1,"step_s":1,)json"
      R"json("blocked_waits":1,"blocked_wait_s":0.5,"worst_blocked":{"batch":2,"wait_s":0.5,"ready":1,"worker":null}})json",
      10.0);
  ASSERT_TRUE(unnamed);
  ASSERT_TRUE(unnamed->waits.worst_blocked);
  EXPECT_FALSE(unnamed->waits.worst_blocked->worker);
  const std::optional<HookEvent> older = parse_hook_event(
      R"json({"kind":"pass_waits","pid":1,"iterator":"I1","pass":1,"begun":1.0,"batches":3,"wait_s":1,"step_s":1})json",
      10.0);
  ASSERT_TRUE(older);
  EXPECT_EQ(older->waits.blocked_waits, 0);
  EXPECT_FALSE(older->waits.worst_blocked);
}

TEST(InputWaitBlocking, BlockedWaitsOutOfRangeAreNotAnEvent) {
  const std::string head =
      R"json({"kind":"pass_waits","pid":1,"iterator":"I1","pass":1,"begun":1.0,"batches":3,"wait_s":1,"step_s":1,)json";
  const char* const kBroken[] = {
      R"json("blocked_waits":-1})json",
      R"json("blocked_waits":1,"blocked_wait_s":-0.5,"worst_blocked":{"batch":2,"wait_s":0.5,"ready":1}})json",
      R"json("blocked_waits":2,"blocked_wait_s":0.5,"worst_blocked":null})json",
      R"json("blocked_waits":0,"blocked_wait_s":0,"worst_blocked":{"batch":2,"wait_s":0.5,"ready":1}})json",
      R"json("blocked_waits":1,"blocked_wait_s":0.5,"worst_blocked":{"batch":2,"wait_s":0.5,"ready":0}})json",
      R"json("blocked_waits":1,"blocked_wait_s":0.5,"worst_blocked":{"batch":0,"wait_s":0.5,"ready":1}})json",
      R"json("blocked_waits":1,"blocked_wait_s":0.5,"worst_blocked":{"batch":2,"wait_s":0.5,"ready":1,"worker":-1}})json",
      R"json("blocked_waits":1,"blocked_wait_s":0.5,"worst_blocked":[2,0.5,1,0]})json",
  };
  int refused = 0;
  for (const char* tail : kBroken) refused += !parse_hook_event(head + tail, 1.0).has_value();
  EXPECT_EQ(refused, 8);
}

TEST(InputWaitBlocking, BlockedWaitsAreSummedPerLoaderPerRankAndForTheJob) {
  const Watched watched = blocked_ranks();
  const InputWait& wait = watched.wait();
  EXPECT_EQ(wait.job.blocked_waits, 6);
  EXPECT_NEAR(wait.job.blocked_wait_s, 0.42, 1e-9);
  EXPECT_EQ(wait.job.slow_waits(), 40);  // every wait after the first: 60 ms, bucket 16
  ASSERT_TRUE(wait.job.worst_blocked);
  EXPECT_EQ(wait.job.worst_blocked->pid, 300);
  EXPECT_EQ(wait.job.worst_blocked->loader, "L1");
  EXPECT_EQ(wait.job.worst_blocked->pass, 2);
  EXPECT_EQ(wait.job.worst_blocked->wait.batch, 9);

  ASSERT_EQ(wait.processes.size(), 2u);
  EXPECT_EQ(wait.processes[0].totals.blocked_waits, 6);
  EXPECT_EQ(wait.processes[1].totals.blocked_waits, 0);
  EXPECT_FALSE(wait.processes[1].totals.worst_blocked);

  std::map<std::pair<pid_t, std::string>, long> by_loader;
  for (const LoaderWait& loader : wait.loaders) by_loader[{loader.pid, loader.loader}] = loader.totals.blocked_waits;
  EXPECT_EQ(by_loader,
            (std::map<std::pair<pid_t, std::string>, long>{{{300, "L1"}, 5}, {{300, "L2"}, 1}, {{301, "L1"}, 0}}));
  const auto l2 = std::find_if(wait.loaders.begin(), wait.loaders.end(),
                               [](const LoaderWait& loader) { return loader.loader == "L2"; });
  ASSERT_NE(l2, wait.loaders.end());
  ASSERT_TRUE(l2->totals.worst_blocked);
  EXPECT_EQ(l2->totals.worst_blocked->pass, 1);
  EXPECT_FALSE(l2->totals.worst_blocked->wait.worker);
}

TEST(InputWaitBlocking, TheSummarySaysItInOneLineUnderTheInputWait) {
  const std::string text = summary_text(blocked_ranks().report);
  EXPECT_THAT(text,
              HasSubstr("\n    head-of-line blocking: in 6 of 40 waits over 1 ms (0.42 s) the loop waited for one "
                        "worker's batch while later batches of other workers were ready; the longest: 90.0 ms "
                        "for batch 9 of pass 2 of L1 of pid 300 (worker 1's), later batches ready: 3\n"));
  const std::size_t input_wait = text.find("  input wait: ");
  ASSERT_NE(input_wait, std::string::npos);
  EXPECT_GT(text.find("head-of-line blocking"), input_wait);

  // None blocked: no line.
  EXPECT_THAT(summary_text(respawned().report), Not(HasSubstr("head-of-line")));
}

TEST(InputWaitBlocking, TheJsonHasTheBlockedWaitsOfEachPassAndEachSum) {
  const nlohmann::json wait = report_json(blocked_ranks().report)["input_wait"];
  EXPECT_EQ(wait["job"]["blocked_waits"], 6);
  EXPECT_NEAR(wait["job"]["blocked_wait_s"].get<double>(), 0.42, 1e-9);
  EXPECT_EQ(wait["job"]["slow_waits"], 40);
  EXPECT_EQ(
      wait["job"]["worst_blocked"],
      (nlohmann::json{
          {"batch", 9}, {"wait_s", 0.09}, {"ready", 3}, {"worker", 1}, {"pid", 300}, {"loader", "L1"}, {"pass", 2}}));
  ASSERT_EQ(wait["ranks"].size(), 2u);
  EXPECT_EQ(wait["ranks"][1]["totals"]["blocked_waits"], 0);
  EXPECT_TRUE(wait["ranks"][1]["totals"]["worst_blocked"].is_null());
  ASSERT_EQ(wait["loaders"].size(), 3u);
  ASSERT_EQ(wait["passes"].size(), 4u);
  EXPECT_EQ(wait["passes"][2]["blocked_waits"], 1);
  EXPECT_EQ(wait["passes"][2]["worst_blocked"],
            (nlohmann::json{{"batch", 4}, {"wait_s", 0.07}, {"ready", 1}, {"worker", nullptr}}));
  EXPECT_TRUE(wait["passes"][3]["worst_blocked"].is_null());
}

/// The gates of `flags` (each "--max-input-wait" or "--max-first-batch-s" with its limit) held
/// against `report`: how many failed, and the lines they wrote.
struct Held {
  nlohmann::json gates;
  long failed = 0;
  std::string lines;
};

Held hold(const WatchReport& report, const std::vector<std::pair<std::string, double>>& limits) {
  WatchCommandOptions options;
  for (Gate& gate : options.gates) {
    for (const auto& [flag, limit] : limits) {
      if (flag == gate.check->flags.gate_flag) gate.limit = limit;
    }
  }
  Held held;
  std::ostringstream out;
  bool any_failed = false;
  held.gates = hold_gates(options, report, out, any_failed);
  for (const auto& gate : held.gates) held.failed += gate["passed"] == false ? 1 : 0;
  EXPECT_EQ(any_failed, held.failed > 0) << "hold_gates said a gate failed where none did, or the other way";
  held.lines = out.str();
  return held;
}

/// A measured gate held against respawned()'s report: a limit below what it measured, which
/// fails with `words`, and one above, which passes.
struct MeasuredGate {
  const char* name = "";  ///< The test's name: the check's.
  const char* flag = "";
  double failing_limit = 0;
  const char* words = "";
  double passing_limit = 0;
  double measure = 0;  ///< What respawned() measured.
};

class MeasuredGates : public ::testing::TestWithParam<MeasuredGate> {};

TEST_P(MeasuredGates, FailWithTheirWordsAtALimitBelowTheMeasureAndPassAboveIt) {
  const MeasuredGate& gate = GetParam();
  const WatchReport report = respawned().report;
  const Held failed = hold(report, {{gate.flag, gate.failing_limit}});
  EXPECT_EQ(failed.failed, 1);
  EXPECT_THAT(failed.lines, HasSubstr(gate.words));
  const Held passed = hold(report, {{gate.flag, gate.passing_limit}});
  EXPECT_EQ(passed.failed, 0);
  EXPECT_EQ(passed.lines, "");
  ASSERT_EQ(passed.gates.size(), 1u);
  EXPECT_NEAR(passed.gates[0]["measure"].get<double>(), gate.measure, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(
    InputWait, MeasuredGates,
    ::testing::Values(MeasuredGate{"input_wait", "--max-input-wait", 0.3,
                                   "the training loop waited 0.37 of its time for data (37%, 2.60 of 7.10 s), more "
                                   "than the 0.3 allowed (--max-input-wait)",
                                   0.4, 2.6 / 7.1},
                      MeasuredGate{"first_batch_s", "--max-first-batch-s", 0.5,
                                   "the longest first batch took 1.00 s (pass 1 of L1 of pid 100), more than the 0.5 "
                                   "allowed (--max-first-batch-s)",
                                   1.5, 1.0}),
    [](const ::testing::TestParamInfo<MeasuredGate>& info) { return std::string(info.param.name); });

TEST(InputWaitGates, AGateThatCouldNotSeeTheWaitFailsAndSaysWhy) {
  std::vector<HookEvent> events = {made(2.0, "I1", {201, 202}, true),
                                   waits("I1", 1, 2.0, 1.0, 0.01, 10, 0.001, 20.0, 5.5)};
  events.back().sequence = 2;
  const WatchReport lost = analyse({program(), fork_of(201, 2.0, 6.0), fork_of(202, 2.0, 6.0)}, events).report;
  const Held held = hold(lost, {{"--max-input-wait", 0.9}, {"--max-first-batch-s", 100.0}});
  EXPECT_EQ(held.failed, 2);
  EXPECT_THAT(held.lines, HasSubstr("--max-input-wait cannot be checked: the accounting of the input wait is "
                                    "incomplete: pid 100 lost 2 of its hook's events"));
  EXPECT_THAT(held.lines, HasSubstr("--max-first-batch-s cannot be checked"));

  const WatchReport off = analyse({program()}, {}, "off: --no-python-trace").report;
  const Held without_hook = hold(off, {{"--max-input-wait", 0.9}});
  EXPECT_EQ(without_hook.failed, 1);
  EXPECT_THAT(without_hook.lines, HasSubstr("--max-input-wait cannot be checked: the Python hook was off"));

  const WatchReport nothing = analyse({program()}, {}).report;
  EXPECT_THAT(hold(nothing, {{"--max-input-wait", 0.9}}).lines, HasSubstr("the hook measured no pass of a DataLoader"));
}

}  // namespace
}  // namespace dlreset::watch::input_wait_test
