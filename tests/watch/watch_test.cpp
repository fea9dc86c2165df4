// `dlreset watch` on real programs: a real-torch training loop whose workers persist, are reset
// as Lightning 1.5.0 reset them, or are not persistent; dlreset's own runs; a process attached
// to; exit statuses, signals and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/command.h"
#include "tests/support/elapsed.h"
#include "tests/support/fixtures.h"
#include "tests/support/python_torch.h"
#include "tests/watch/watch_json.h"

namespace dlreset::watch {
namespace {

using ::testing::HasSubstr;
using Result = testing::CommandResult;

using testing::kPython;
/// How long a process the test started may take to appear, or to go after it was told to: far
/// more than it needs (a Python start with torch is ~1 s here), so only a hang trips it.
constexpr double kProcessDeadlineS = 30.0;

std::string train_loop() { return std::string(DLRESET_SOURCE_DIR) + "/tests/watch/train_loop.py"; }

Result watch(const std::string& args) { return testing::run_shell(testing::dlreset_binary() + " watch " + args); }

struct Scenario {
  std::string start_method;
  std::string mode;
  int generations;
  int respawns;
};

std::string scenario_name(const ::testing::TestParamInfo<Scenario>& info) {
  return info.param.start_method + "_" + info.param.mode;
}

class WatchTrainLoop : public ::testing::TestWithParam<Scenario> {};

TEST_P(WatchTrainLoop, CountsTheGenerationsAndTheRespawnsOfARealTorchLoop) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Scenario& scenario = GetParam();
  testing::TempDir dir;
  const Result result =
      watch("--expect-persistent --epoch-regex '^Epoch' --json " + dir.file("watch.json") + " --events " +
            dir.file("events.json") + " -- " + kPython + " " + train_loop() + " --workers 2 --epochs 3 --mode " +
            scenario.mode + " --start-method " + scenario.start_method);
  const nlohmann::json report = read_json(dir.file("watch.json"));
  ASSERT_FALSE(report.empty()) << result.err;
  EXPECT_EQ(report["schema"], "dlreset.watch");
  EXPECT_EQ(report["workers"], 2 * scenario.generations) << result.err;
  EXPECT_EQ(report["exit_status"], 0) << result.err;
  EXPECT_EQ(report["generations"].size(), static_cast<std::size_t>(scenario.generations)) << result.err;
  EXPECT_EQ(report["respawns"].size(), static_cast<std::size_t>(scenario.respawns)) << result.err;
  for (const auto& generation : report["generations"]) {
    EXPECT_EQ(generation["workers"].size(), 2u) << result.err;
    EXPECT_EQ(generation["start"], scenario.start_method) << result.err;
  }
  // One respawn in each epoch after the first, none in the first.
  for (std::size_t r = 0; r < report["respawns"].size(); ++r) {
    EXPECT_EQ(report["respawns"][r]["epoch"], static_cast<int>(r) + 1) << result.err;
    EXPECT_EQ(report["respawns"][r]["replaced"], 2) << result.err;
  }
  EXPECT_EQ(report["epoch_marks_s"].size(), 3u);
  // Every descendant is a worker or, with spawn, multiprocessing's resource tracker.
  EXPECT_EQ(count_role(report, "worker"), 2 * scenario.generations) << result.err;
  EXPECT_EQ(count_role(report, "other") + count_role(report, "program"), 0) << result.err;
  // The program's output passes through unchanged.
  EXPECT_THAT(result.out, HasSubstr("Epoch 0\n"));
  EXPECT_THAT(result.out, HasSubstr("epoch 2 done"));
  // The hook named the loader and saw every iterator it made, one a generation.
  int made = 0;
  for (const auto& event : report["python"]["events"]) made += event["kind"] == "iterator_made";
  EXPECT_EQ(made, scenario.generations) << result.err;
  EXPECT_EQ(report["python"]["loaders"].size(), 1u) << result.err;
  if (scenario.respawns == 0) {
    EXPECT_EQ(result.status, 0) << result.err;
    // Without persistent workers every pass starts new ones by design: no respawn, and the
    // verdict says why there were three sets.
    EXPECT_THAT(result.err, HasSubstr(scenario.mode == "persistent"
                                          ? "the workers are persistent"
                                          : "but L1 is not persistent (persistent_workers=False), so every new pass "
                                            "of it starts new workers"));
  } else {
    EXPECT_EQ(result.status, kGateFailed) << result.err;
    EXPECT_THAT(result.err, HasSubstr("workers were replaced " + std::to_string(scenario.respawns) + " times (at "));
    EXPECT_THAT(result.err, HasSubstr("the loop is not keeping persistent workers"));
    // A spawned generation lives for seconds (each worker starts an interpreter and imports
    // torch), long enough to be reported as it happens, not only in the summary.
    if (scenario.start_method == "spawn") {
      EXPECT_THAT(result.err, HasSubstr("2 workers were replaced by generation 2 (epoch 1)\n"));
    }
    // Every respawn came from one stack, which the summary prints once: the function that shut
    // the workers down.
    EXPECT_THAT(result.err, HasSubstr(std::to_string(scenario.respawns) + " respawns, all from this stack:"));
    EXPECT_THAT(result.err, HasSubstr(", in reset_like_lightning_1_5_0\n    loader._iterator._shutdown_workers()"));
  }
  // A spawn and an exit for each worker, a reset mark where the program stopped workers, and the
  // loop's waits for data: each of the three passes' first batch and its steady state.
  const nlohmann::json events = read_json(dir.file("events.json"));
  const int resets = scenario.mode == "reset" ? scenario.respawns : 0;
  std::map<std::string, int> kinds;
  for (const auto& event : events["events"]) {
    const std::string kind = event["kind"].get<std::string>();
    ++kinds[kind == "input_wait" ? kind + "/" + event["phase"].get<std::string>() : kind];
  }
  EXPECT_EQ(kinds["spawn"], 2 * scenario.generations);
  EXPECT_EQ(kinds["exit"], 2 * scenario.generations);
  EXPECT_EQ(kinds["iterator_reset"], resets);
  EXPECT_EQ(kinds["input_wait/first_batch"], 3);
  EXPECT_EQ(kinds["input_wait/steady"], 3);
  EXPECT_EQ(events["events"].size(), static_cast<std::size_t>(4 * scenario.generations + resets + 6));
}

INSTANTIATE_TEST_SUITE_P(RealTorch, WatchTrainLoop,
                         ::testing::Values(Scenario{"fork", "persistent", 1, 0}, Scenario{"fork", "reset", 3, 2},
                                           Scenario{"fork", "nonpersistent", 3, 0},
                                           Scenario{"spawn", "persistent", 1, 0}, Scenario{"spawn", "reset", 3, 2},
                                           Scenario{"spawn", "nonpersistent", 3, 0},
                                           Scenario{"forkserver", "reset", 3, 2}),
                         scenario_name);

TEST(Watch, PollingFindsTheSameRespawnsAsTheEventsConnector) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  testing::TempDir dir;
  const Result result = watch("--mode poll --json " + dir.file("watch.json") + " -- " + kPython + " " + train_loop() +
                              " --workers 2 --epochs 3 --mode reset");
  const nlohmann::json report = read_json(dir.file("watch.json"));
  ASSERT_FALSE(report.empty()) << result.err;
  EXPECT_EQ(report["mode"], "poll");
  EXPECT_EQ(report["workers"], 6) << result.err;
  EXPECT_EQ(report["generations"].size(), 3u) << result.err;
  EXPECT_EQ(report["respawns"].size(), 2u) << result.err;
  EXPECT_THAT(result.err, HasSubstr("polling /proc every 5 ms"));
}

class WatchDlresetRun : public ::testing::TestWithParam<std::string> {};

TEST_P(WatchDlresetRun, SeesAsManyWorkersAsTheRunSpawned) {
  testing::TempDir dir;
  const Result result =
      watch("--json " + dir.file("watch.json") + " -- " + testing::dlreset_binary() + " run --variant " + GetParam() +
            " --workers 2 --epochs 3 --limit-train-batches 4 --limit-val-batches 2 --no-progress"
            " --json " +
            dir.file("run.json"));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json run = read_json(dir.file("run.json"));
  const nlohmann::json report = read_json(dir.file("watch.json"));
  ASSERT_FALSE(run.empty() || report.empty()) << result.err;
  const int spawned = run["train"]["worker_spawns"].get<int>() + run["val"]["worker_spawns"].get<int>();
  EXPECT_EQ(report["workers"], spawned) << result.err;
  for (const auto& generation : report["generations"]) EXPECT_EQ(generation["start"], "fork");
  if (GetParam() == "buggy") {
    EXPECT_EQ(spawned, 3 * 2 + 4 * 2);  // E·W train + (E+1)·W val
    EXPECT_GT(report["respawns"].size(), 0u);
  } else {
    EXPECT_EQ(spawned, 2 + 2);
    EXPECT_EQ(report["respawns"].size(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, WatchDlresetRun, ::testing::Values("buggy", "fixed"));

TEST(Watch, SeesDlresetsOwnSpawnedWorkers) {
  testing::TempDir dir;
  const Result result = watch("--json " + dir.file("watch.json") + " -- " + testing::dlreset_binary() +
                              " run --variant fixed --start-method spawn --workers 1 --epochs 2"
                              " --limit-train-batches 2 --limit-val-batches 1 --no-progress");
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json report = read_json(dir.file("watch.json"));
  EXPECT_EQ(report["workers"], 2) << result.err;
  for (const auto& generation : report["generations"]) EXPECT_EQ(generation["start"], "dlreset-spawn");
}

TEST(Watch, AttachedToARunningProgramSeesTheWorkersItStartsAfterwards) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  testing::TempDir dir;
  // The loop waits for a file before it builds its loader; the test creates it once the
  // watcher says it is attached, so the workers surely start after the attach.
  const std::string go = dir.file("go");
  const std::string script =
      std::string(kPython) + " " + train_loop() + " --workers 2 --epochs 2 --mode reset --wait-for " + go +
      " & program=$!; " + testing::dlreset_binary() + " watch --pid $program --json " + dir.file("watch.json") + " 2>" +
      dir.file("watch.err") + " & watcher=$!; " + "for i in $(seq 600); do grep -q attached " + dir.file("watch.err") +
      " && break; sleep 0.05; done; " + "touch " + go +
      "; wait $watcher; echo watcher=$?; wait $program; echo program=$?";
  const Result result = testing::run_shell(script);
  const std::string err = read_file(dir.file("watch.err"));
  EXPECT_THAT(result.out, HasSubstr("watcher=0")) << err;
  EXPECT_THAT(result.out, HasSubstr("program=0"));
  const nlohmann::json report = read_json(dir.file("watch.json"));
  ASSERT_FALSE(report.empty()) << err;
  EXPECT_EQ(report["attached"], true);
  EXPECT_EQ(report["workers"], 4) << err;
  EXPECT_EQ(report["respawns"].size(), 1u) << err;
  EXPECT_EQ(report["processes"][0]["existed_at_attach"], true);
}

TEST(Watch, PassesTheProgramsExitStatusThrough) {
  EXPECT_EQ(watch("-- sh -c 'exit 0'").status, 0);
  EXPECT_EQ(watch("-- sh -c 'exit 3'").status, 3);
  const Result killed = watch("-- sh -c 'kill -9 $$'");
  EXPECT_EQ(killed.status, 128 + SIGKILL);
  EXPECT_THAT(killed.err, HasSubstr("signal 9 (Killed)"));
  const Result missing = watch("-- no-such-command-dlreset");
  EXPECT_EQ(missing.status, 127);
  EXPECT_THAT(missing.err, HasSubstr("cannot run 'no-such-command-dlreset'"));
  testing::TempDir dir;
  std::ofstream(dir.file("not-a-program")) << "plain text\n";
  EXPECT_EQ(watch("-- " + dir.file("not-a-program")).status, 126);
}

TEST(Watch, AnInputWaitGateThatMeasuredNothingFailsAndSaysSo) {
  const Result nothing = watch("--no-live --max-input-wait 0.5 -- sh -c 'exit 0'");
  EXPECT_EQ(nothing.status, kGateFailed) << nothing.err;
  EXPECT_THAT(nothing.err, HasSubstr("--max-input-wait cannot be checked: the hook measured no pass of a DataLoader."));
  const Result off = watch("--no-live --no-python-trace --max-first-batch-s 9 -- /usr/bin/python3 -c pass");
  EXPECT_EQ(off.status, kGateFailed) << off.err;
  EXPECT_THAT(off.err, HasSubstr("--max-first-batch-s cannot be checked: the Python hook was off"));
}

/// The table goes to dlreset-watch, whose options are the subcommand's (watch/cli), and which
/// starts without loading LibTorch; one case goes to the subcommand.
TEST(Watch, BadInputExitsTwoWithOneLine) {
  testing::expect_usage_errors(testing::dlreset_binary() + " watch", {{"--poll-ms 0 -- true", "--poll-ms"}});
  testing::expect_usage_errors(testing::watch_binary(), {{"", "needs a command to run"},
                                                         {"--pid 999999999", "--pid"},
                                                         {"--pid 0", "--pid"},
                                                         {"--epoch-regex '(' -- true", "--epoch-regex"},
                                                         {"--poll-ms 0 -- true", "--poll-ms"},
                                                         {"--mode sometimes -- true", "--mode"},
                                                         {"--json - -- true", "--json"},
                                                         {"--pid 1 -- true", "not both"},
                                                         {"--max-respawns -1 -- true", "--max-respawns"},
                                                         {"--max-input-wait 1.5 -- true", "--max-input-wait"},
                                                         {"--max-input-wait 30% -- true", "--max-input-wait"},
                                                         {"--max-first-batch-s -1 -- true", "--max-first-batch-s"}});
  // A pid that exists but cannot be read needs a process of another user, which a test run as
  // root cannot make unreadable; check_attachable's message for it is the same one line.
}

/// Runs `dlreset watch -- sleep <unique>` in the background, waits for the sleep to start, sends
/// the watcher `signal_number`, and reports how both ended.
struct SignalOutcome {
  int watcher_status = -1;
  /// It exited (with the program's status) rather than being killed: 143 alone cannot tell a
  /// watcher that passed SIGTERM on from one that SIGTERM killed.
  bool watcher_exited = false;
  bool program_gone = false;
};

/// Whether a live process runs exactly `sleep <seconds>` (a zombie's command line is empty).
bool sleep_exists(const std::string& seconds) {
  const std::string wanted = std::string("sleep") + '\0' + seconds + '\0';
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (read_file(entry.path() / "cmdline") == wanted) return true;
  }
  return false;
}

SignalOutcome signal_the_watcher(int signal_number, const std::string& seconds) {
  const pid_t watcher = ::fork();
  if (watcher == 0) {
    ::execl(testing::dlreset_binary().c_str(), "dlreset", "watch", "--", "sleep", seconds.c_str(), nullptr);
    ::_exit(127);
  }
  SignalOutcome outcome;
  const auto started = std::chrono::steady_clock::now();
  const auto waited_s = [&] { return testing::seconds_since(started); };
  while (!sleep_exists(seconds) && waited_s() < kProcessDeadlineS) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(watcher, signal_number);
  int status = 0;
  ::waitpid(watcher, &status, 0);
  outcome.watcher_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  outcome.watcher_exited = WIFEXITED(status);
  while (sleep_exists(seconds) && waited_s() < kProcessDeadlineS) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  outcome.program_gone = !sleep_exists(seconds);
  return outcome;
}

TEST(Watch, PassesSigtermToTheProgramAndEndsWithIt) {
  const SignalOutcome outcome = signal_the_watcher(SIGTERM, "41.25");
  EXPECT_TRUE(outcome.watcher_exited);
  EXPECT_EQ(outcome.watcher_status, 128 + SIGTERM);
  EXPECT_TRUE(outcome.program_gone);
}

TEST(Watch, PassesSigintToTheProgram) {
  const SignalOutcome outcome = signal_the_watcher(SIGINT, "41.5");
  EXPECT_TRUE(outcome.watcher_exited);
  EXPECT_EQ(outcome.watcher_status, 128 + SIGINT);
  EXPECT_TRUE(outcome.program_gone);
}

TEST(Watch, AKilledWatcherTakesTheProgramWithIt) {
  const SignalOutcome outcome = signal_the_watcher(SIGKILL, "41.75");
  EXPECT_FALSE(outcome.watcher_exited);
  EXPECT_EQ(outcome.watcher_status, 128 + SIGKILL);
  EXPECT_TRUE(outcome.program_gone);
}

}  // namespace
}  // namespace dlreset::watch
