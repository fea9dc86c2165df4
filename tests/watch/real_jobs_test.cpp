// The watcher on the shapes real jobs take: a two-rank torchrun job, a progress bar that redraws
// its line, a wrapper script, Python children that cannot load the hook. They run under
// dlreset-watch (testing::watch_binary), and one test holds `dlreset watch` to its counts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/command.h"
#include "tests/support/fixtures.h"
#include "tests/support/python_torch.h"
#include "tests/watch/watch_json.h"
#include "tests/watch/watched.h"

namespace dlreset::watch {
namespace {

using ::testing::HasSubstr;
using testing::kPython;

/// torch 1.13's torchrun on Python 3.11 needs --redirects and --tee: with its default it stops
/// at start (AttributeError in Std.from_str). A short monitor interval ends the job promptly.
std::string torchrun(const std::string& script_args) {
  return std::string(kPython) +
         " -m torch.distributed.run --standalone --nproc_per_node 2 --redirects 1 --tee 1 --monitor_interval 0.2 " +
         source_dir() + "/tests/watch/ddp_loop.py " + script_args;
}

TEST(RealJobs, ATorchrunJobGivesEveryRanksWorkersTracebacksAndSums) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  testing::TempDir dir;
  const auto [result, report] =
      watch_command(dir.file("watch.json"), "--no-live --expect-persistent --epoch-regex 'Epoch [0-9]+ rank 0'",
                    torchrun("--mode reset --epochs 3"));
  ASSERT_FALSE(report.empty()) << result.err;
  EXPECT_EQ(report["exit_status"], 0) << result.err;
  // torchrun's agent, two ranks (training processes), each rank's workers: 3 epochs of 2.
  int ranks = 0;
  for (const auto& process : report["processes"]) ranks += process["role"] == "program";
  EXPECT_EQ(ranks, 2) << result.err;
  EXPECT_EQ(report["workers"], 2 * 2 * 3) << result.err;
  // Gates count the whole job: each rank respawned twice.
  EXPECT_EQ(check_counts(report)["respawns"], 4) << result.err;
  EXPECT_EQ(result.status, kGateFailed) << result.err;
  // The hook ran in both ranks, which named themselves, and saw each rank's resets.
  std::set<int> hooked_ranks;
  for (const auto& process : report["python"]["processes"]) {
    if (process["hook_loaded"] == true && process["rank"].is_number()) hooked_ranks.insert(process["rank"].get<int>());
  }
  EXPECT_EQ(hooked_ranks, (std::set<int>{0, 1})) << result.err;
  std::map<int, int> shutdowns;
  for (const auto& event : report["python"]["events"]) {
    if (event["kind"] == "workers_shutdown" && event["rank"].is_number()) ++shutdowns[event["rank"].get<int>()];
  }
  EXPECT_GE(shutdowns[0], 2) << result.err;
  EXPECT_GE(shutdowns[1], 2) << result.err;
  EXPECT_THAT(result.err, HasSubstr("4 respawns, all from this stack:"));
  // Both ranks ran the same line: one traceback, whose heading names both ranks' processes (those
  // that loaded the hook: their fork workers' own events carry the rank too).
  std::map<int, int> pid_of_rank;
  for (const auto& process : report["python"]["processes"]) {
    if (process["hook_loaded"] == true && process["rank"].is_number())
      pid_of_rank[process["rank"].get<int>()] = process["pid"].get<int>();
  }
  EXPECT_THAT(result.err,
              HasSubstr("in pids " + std::to_string(pid_of_rank[0]) + " (rank 0) and " +
                        std::to_string(pid_of_rank[1]) + " (rank 1) shut down by reset_like_lightning_1_5_0()"));
  EXPECT_THAT(result.err, HasSubstr("in reset_like_lightning_1_5_0\n        loader._iterator._shutdown_workers()"));
  // The ranks' lines come through torchrun's tee, prefixed; the pattern finds rank 0's.
  EXPECT_EQ(report["epoch_marks_s"].size(), 3u) << result.err;
}

TEST(RealJobs, AProgressBarsRedrawnLineMarksEachEpochOnce) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  testing::TempDir dir;
  const auto [result, report] = watch_command(dir.file("watch.json"), "--no-live --epoch-regex 'Epoch [0-9]+'",
                                              watch_test_program("progress_bar.py"));
  ASSERT_FALSE(report.empty()) << result.err;
  EXPECT_EQ(report["epoch_marks_s"].size(), 3u) << result.err;
  // The bar is drawn for the new epoch before its workers are replaced: each respawn falls in
  // the epoch that caused it.
  ASSERT_EQ(report["respawns"].size(), 2u) << result.err;
  EXPECT_EQ(report["respawns"][0]["epoch"], 1) << result.err;
  EXPECT_EQ(report["respawns"][1]["epoch"], 2) << result.err;
  // The bar passes through byte for byte.
  EXPECT_THAT(result.err, HasSubstr("\rEpoch 2:   0%|          | 0/10\rEpoch 2:  10%|#         | 1/10"));
}

TEST(RealJobs, AWrapperScriptsSubshellsAreNotWorkers) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  testing::TempDir dir;
  const auto [result, report] =
      watch_command(dir.file("watch.json"), "--no-live --expect-clean",
                    "sh " + source_dir() + "/tests/watch/run.sh " + watch_test_program("train_loop.py --epochs 2"));
  ASSERT_FALSE(report.empty()) << result.err;
  EXPECT_EQ(report["workers"], 2) << result.err;
  EXPECT_EQ(report["generations"].size(), 1u) << result.err;
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("wrapper: done"));
}

TEST(RealJobs, PythonChildrenThatCannotLoadTheHookAreNamedWithTheReason) {
  testing::TempDir dir;
  const auto [result, report] =
      watch_command(dir.file("watch.json"), "--no-live", watch_test_program("spawns_pythons.py"));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(result.err, HasSubstr("did not load the hook: it was run with -I (isolated mode)"));
  EXPECT_THAT(result.err, HasSubstr("did not load the hook: its PYTHONPATH (/opt/elsewhere) no longer holds"));
  EXPECT_THAT(result.err, HasSubstr("did not load the hook: it was run with -S"));
  int loaded = 0;
  int not_loaded = 0;
  for (const auto& process : report["python"]["processes"]) {
    (process["hook_loaded"] == true ? loaded : not_loaded) += 1;
  }
  EXPECT_EQ(loaded, 1) << result.err;
  EXPECT_EQ(not_loaded, 3) << result.err;
  // A gate on a Python check is not passed by a hook that saw nothing: without the hook it
  // cannot be checked, and says so.
  const testing::CommandResult unchecked =
      testing::run_shell(testing::watch_binary() + " --no-live --no-python-trace --max-extra-iterators 0 -- " +
                         watch_test_program("spawns_pythons.py"));
  EXPECT_EQ(unchecked.status, kGateFailed) << unchecked.err;
  EXPECT_THAT(unchecked.err, HasSubstr("--max-extra-iterators cannot be checked: the Python hook was off"));
}

TEST(RealJobs, TheStandaloneWatcherLinksNoLibTorchAndGivesTheSameReport) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const std::string standalone = testing::watch_binary();
  const testing::CommandResult libraries = testing::run_shell("ldd " + standalone);
  EXPECT_EQ(libraries.status, 0);
  EXPECT_THAT(libraries.out, ::testing::Not(HasSubstr("libtorch")));
  EXPECT_THAT(libraries.out, ::testing::Not(HasSubstr("libc10")));
  testing::TempDir dir;
  const std::string watched = " --no-live --expect-persistent --json " + dir.file("watch.json") + " -- " +
                              watch_test_program("train_loop.py --mode reset --epochs 2");
  const testing::CommandResult result = testing::run_shell(standalone + watched);
  EXPECT_EQ(result.status, kGateFailed) << result.err;
  EXPECT_THAT(result.err, HasSubstr("dlreset-watch: workers were replaced 1 time"));
  EXPECT_THAT(result.err, HasSubstr("in reset_like_lightning_1_5_0"));
  const nlohmann::json report = read_json(dir.file("watch.json"));
  EXPECT_EQ(check_counts(report)["respawns"], 1) << result.err;
  // The subcommand counts the same: the suites of real programs watch with the standalone
  // watcher (testing::watch_binary), which starts sooner.
  const testing::CommandResult subcommand = testing::run_shell(testing::dlreset_binary() + " watch" + watched);
  EXPECT_EQ(subcommand.status, kGateFailed) << subcommand.err;
  EXPECT_THAT(subcommand.err, HasSubstr("dlreset watch: workers were replaced 1 time"));
  EXPECT_EQ(check_counts(read_json(dir.file("watch.json"))), check_counts(report)) << subcommand.err;
}

}  // namespace
}  // namespace dlreset::watch
