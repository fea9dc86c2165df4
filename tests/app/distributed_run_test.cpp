// `dlreset run --ranks 2`: a DDP-style job of two ranks on c10d's Gloo, started as torchrun starts
// one. Each rank spawns the workers one process would (1.5.0 per epoch, 1.5.1 once), the ranks
// keep bitwise equal weights, and a rank that dies, a worker of a rank that dies or a signal to
// rank 0 ends the whole job with nothing left running.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/command.h"
#include "tests/support/fixtures.h"
#include "tests/support/held_port.h"
#include "tests/support/process_census.h"
#include "tests/support/running_command.h"

namespace dlreset::app {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kRanks = 2;
constexpr int kEpochs = 2;
constexpr std::int64_t kTrainBatches = 3;
constexpr std::int64_t kBatchSize = 16;
/// --dist-timeout of the fault tests: the job must end well within it.
constexpr double kDistTimeoutS = 20.0;
/// Two ranks start LibTorch, load Fashion-MNIST and fork their workers on two shared cores.
constexpr double kStartDeadlineS = 60.0;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

/// The `dlreset run` flags every job here shares, after "run".
std::string job_flags(const std::string& variant, int workers) {
  return " run --ranks " + std::to_string(kRanks) + " --master-port 0 --variant " + variant + " --workers " +
         std::to_string(workers) + " --start-method fork --epochs " + std::to_string(kEpochs) +
         " --limit-train-batches " + std::to_string(kTrainBatches) +
         " --limit-val-batches 2 --num-sanity-val-steps 1 --batch-size " + std::to_string(kBatchSize) +
         " --device cpu --no-progress";
}

struct JobCase {
  const char* variant;
  int workers;
};

class TwoRanks : public ::testing::TestWithParam<JobCase> {};

TEST_P(TwoRanks, EachRankSpawnsWhatOneProcessWouldAndTheWeightsStayEqual) {
  const JobCase job = GetParam();
  const bool buggy = std::string(job.variant) == "buggy";
  testing::TempDir dir;
  const std::string json_path = dir.file("job.json");
  const std::string events_path = dir.file("events.json");
  const testing::CommandResult result =
      testing::run_shell(testing::dlreset_binary() + job_flags(job.variant, job.workers) + " --json " + json_path +
                         " --events " + events_path + (buggy ? " --trace-resets" : ""));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(occurrences(result.out, "whole fit"), 1u) << "the summary comes from rank 0 alone:\n" << result.out;
  EXPECT_THAT(result.out,
              HasSubstr("2 ranks × " + std::to_string(job.workers) + (job.workers == 1 ? " worker " : " workers ")));

  const nlohmann::json report = nlohmann::json::parse(read_file(json_path));
  ASSERT_EQ(report["world_size"], kRanks);
  ASSERT_EQ(report["ranks"].size(), static_cast<std::size_t>(kRanks));
  // Per rank and loader: 1.5.0 spawns E·W train and (E+1)·W val workers (the sanity check's
  // pass too); the others spawn W once.
  const std::int64_t train_spawns = buggy ? kEpochs * job.workers : job.workers;
  const std::int64_t val_spawns = buggy ? (kEpochs + 1) * job.workers : job.workers;
  for (int rank = 0; rank < kRanks; ++rank) {
    const nlohmann::json& one = report["ranks"][rank];
    EXPECT_EQ(one["rank"], rank);
    EXPECT_EQ(one["train"]["worker_spawns"], train_spawns) << "rank " << rank;
    EXPECT_EQ(one["val"]["worker_spawns"], val_spawns) << "rank " << rank;
    EXPECT_EQ(one["train"]["dataset_loads"], train_spawns) << "rank " << rank;
    for (int epoch = 0; epoch < kEpochs; ++epoch) {
      EXPECT_EQ(one["train_samples_per_epoch"][epoch], kTrainBatches * kBatchSize) << "rank " << rank;
    }
  }
  EXPECT_EQ(report["totals"]["train"]["worker_spawns"], kRanks * train_spawns);
  EXPECT_EQ(report["totals"]["val"]["worker_spawns"], kRanks * val_spawns);

  // The gradients are averaged every step, so the weights are bitwise equal after every epoch,
  // and they move from one epoch to the next. Each rank trains on its own shard.
  const nlohmann::json& first = report["ranks"][0];
  const nlohmann::json& second = report["ranks"][1];
  ASSERT_EQ(first["parameter_digest_per_epoch"].size(), static_cast<std::size_t>(kEpochs));
  EXPECT_EQ(first["parameter_digest_per_epoch"], second["parameter_digest_per_epoch"]);
  EXPECT_NE(first["parameter_digest_per_epoch"][0], first["parameter_digest_per_epoch"][1]);
  EXPECT_EQ(first["val_loss_per_epoch"], second["val_loss_per_epoch"]) << "the validation loss is reduced";
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    EXPECT_NE(first["train_order_digest_per_epoch"][epoch], second["train_order_digest_per_epoch"][epoch])
        << "epoch " << epoch << ": the ranks trained on the same samples";
  }

  const nlohmann::json events = nlohmann::json::parse(read_file(events_path));
  std::set<int> ranks_with_spawns;
  for (const nlohmann::json& event : events["events"]) {
    if (event["kind"] == "spawn") ranks_with_spawns.insert(event["rank"].get<int>());
  }
  EXPECT_EQ(ranks_with_spawns, (std::set<int>{0, 1}));

  if (buggy) {
    EXPECT_THAT(result.err, HasSubstr("[rank 0] Traceback"));
    EXPECT_THAT(result.err, HasSubstr("[rank 1] Traceback"));
  } else {
    EXPECT_THAT(result.err, Not(HasSubstr("Traceback")));
  }
}

INSTANTIATE_TEST_SUITE_P(Cli, TwoRanks,
                         ::testing::Values(JobCase{"buggy", 2}, JobCase{"fixed", 2}, JobCase{"workaround", 1},
                                           JobCase{"vanilla", 1}),
                         [](const ::testing::TestParamInfo<JobCase>& info) {
                           return std::string(info.param.variant) + "_" + std::to_string(info.param.workers) +
                                  "_workers";
                         });

/// The children of `parent` whose environment holds `variable` (as "NAME=value").
std::vector<std::int64_t> children_with(std::int64_t parent, const std::string& variable) {
  std::vector<std::int64_t> found;
  for (const std::int64_t pid : testing::child_pids(parent)) {
    const std::string environment = read_file("/proc/" + std::to_string(pid) + "/environ");
    std::size_t start = 0;
    while (start < environment.size()) {
      const std::size_t end = environment.find('\0', start);
      if (environment.compare(start, end - start, variable) == 0) found.push_back(pid);
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return found;
}

/// Every process below `root`, at this moment.
std::vector<std::int64_t> descendants(std::int64_t root) {
  std::vector<std::int64_t> all;
  std::vector<std::int64_t> frontier{root};
  while (!frontier.empty()) {
    const std::int64_t pid = frontier.back();
    frontier.pop_back();
    for (const std::int64_t child : testing::child_pids(pid)) {
      all.push_back(child);
      frontier.push_back(child);
    }
  }
  return all;
}

/// A job long enough to be stopped while it trains: rank 0, its rank 1 and their workers.
class RunningJob {
 public:
  RunningJob()
      : command_({testing::dlreset_binary(),
                  "run",
                  "--ranks",
                  "2",
                  "--master-port",
                  "0",
                  "--workers",
                  "1",
                  "--start-method",
                  "fork",
                  "--epochs",
                  "1000",
                  "--limit-train-batches",
                  "50",
                  "--limit-val-batches",
                  "5",
                  "--dist-timeout",
                  std::to_string(static_cast<int>(kDistTimeoutS)),
                  "--device",
                  "cpu",
                  "--no-progress"}) {}

  /// Waits until both ranks train: rank 0 has printed its first line, and rank 1 and every
  /// rank's train and val worker are running. Returns rank 1's pid, or -1.
  std::int64_t wait_until_training() {
    if (!command_.wait_until_training(3, kStartDeadlineS)) return -1;
    const auto start = std::chrono::steady_clock::now();
    while (testing::seconds_since(start) < kStartDeadlineS) {
      const std::vector<std::int64_t> rank_one = children_with(command_.pid(), "RANK=1");
      if (rank_one.size() == 1 && testing::child_pids(rank_one[0]).size() >= 2) return rank_one[0];
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

  testing::RunningCommand& command() { return command_; }

 private:
  testing::RunningCommand command_;
};

/// Kills `victim` with SIGKILL while the job trains; returns the job's wait status and checks
/// that nothing of it is left running.
int kill_and_wait(RunningJob& job, std::int64_t victim, const std::vector<std::int64_t>& processes) {
  const auto killed = std::chrono::steady_clock::now();
  EXPECT_EQ(::kill(static_cast<pid_t>(victim), SIGKILL), 0);
  const std::optional<int> status = job.command().wait_for_exit(kDistTimeoutS + 10.0);
  EXPECT_TRUE(status.has_value()) << "the job did not end within the timeout";
  if (!status) return -1;
  std::printf("the job ended %.3f s after the kill\n", testing::seconds_since(killed));
  const std::vector<std::int64_t> left = testing::wait_until_dead(processes, 5.0);
  EXPECT_TRUE(left.empty()) << left.size() << " processes of the job outlived it";
  return *status;
}

TEST(RankFaults, KilledRankEndsTheJobNamingIt) {
  RunningJob job;
  const std::int64_t rank_one = job.wait_until_training();
  ASSERT_GT(rank_one, 0) << "the job did not start training: " << job.command().err();
  const std::vector<std::int64_t> processes = descendants(job.command().pid());
  const int status = kill_and_wait(job, rank_one, processes);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_THAT(job.command().err(), HasSubstr("rank 1 (pid " + std::to_string(rank_one) + ") was killed by signal 9"));
}

TEST(RankFaults, ARankKilledBeforeItJoinsEndsTheJobWithoutWaitingOutTheTimeout) {
  // A timeout no test would wait for: rank 0 must see the death, not run out of time.
  constexpr double kLongTimeoutS = 600.0;
  testing::RunningCommand job({testing::dlreset_binary(), "run", "--ranks", "2", "--master-port", "0", "--workers", "0",
                               "--epochs", "1", "--dist-timeout", std::to_string(static_cast<int>(kLongTimeoutS)),
                               "--device", "cpu", "--no-progress"});
  ASSERT_GT(job.pid(), 0);
  // Rank 1's environment shows once it has exec'd; LibTorch still has to load before it can
  // reach the store, and it is killed long before that.
  std::int64_t rank_one = -1;
  const auto start = std::chrono::steady_clock::now();
  while (rank_one < 0 && testing::seconds_since(start) < kStartDeadlineS) {
    const std::vector<std::int64_t> found = children_with(job.pid(), "RANK=1");
    if (found.size() == 1) rank_one = found[0];
    if (rank_one < 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GT(rank_one, 0) << "rank 0 never started rank 1: " << job.err();
  ASSERT_EQ(::kill(static_cast<pid_t>(rank_one), SIGKILL), 0);
  const std::optional<int> status = job.wait_for_exit(kStartDeadlineS);
  ASSERT_TRUE(status.has_value()) << "rank 0 went on waiting for a rank that had died";
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 1);
  EXPECT_THAT(job.err(), HasSubstr("rank 1 (pid " + std::to_string(rank_one) + ") was killed by signal 9"));
  EXPECT_THAT(job.err(), HasSubstr("stopped waiting for the other ranks"))
      << "rank 1 died before it joined, so rank 0 was still waiting for it: " << job.err();
}

TEST(RankFaults, KilledWorkerOfRankOneEndsTheJobNamingTheRank) {
  RunningJob job;
  const std::int64_t rank_one = job.wait_until_training();
  ASSERT_GT(rank_one, 0) << "the job did not start training: " << job.command().err();
  const std::vector<std::int64_t> processes = descendants(job.command().pid());
  const std::vector<std::int64_t> workers = testing::child_pids(rank_one);
  ASSERT_FALSE(workers.empty());
  const int status = kill_and_wait(job, workers.front(), processes);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string err = job.command().err();
  EXPECT_THAT(err, HasSubstr("rank 1 (pid " + std::to_string(rank_one) + ") exited with status 1"));
  EXPECT_THAT(err, HasSubstr("exited unexpectedly")) << "rank 1's own error says which worker died";
}

TEST(RankFaults, KilledRankZeroTakesEveryOtherRankAndWorkerWithIt) {
  RunningJob job;
  const std::int64_t rank_one = job.wait_until_training();
  ASSERT_GT(rank_one, 0) << "the job did not start training: " << job.command().err();
  const std::vector<std::int64_t> processes = descendants(job.command().pid());
  ASSERT_GE(processes.size(), 5u) << "rank 1 and two workers of each rank";
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(job.command().pid(), SIGKILL), 0);
  const std::optional<int> status = job.command().wait_for_exit(5.0);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL);
  // Rank 1 dies of PR_SET_PDEATHSIG (SIGTERM), shuts its workers down and exits; rank 0's
  // workers die of theirs. Their zombies belong to init now, so "dead" is what can be seen.
  const std::vector<std::int64_t> left = testing::wait_until_dead(processes, kDistTimeoutS);
  EXPECT_TRUE(left.empty()) << left.size() << " processes outlived rank 0 by " << kDistTimeoutS << " s";
  std::printf("every rank and worker had stopped %.3f s after rank 0 was killed\n", testing::seconds_since(killed));
  EXPECT_THAT(job.command().err(), HasSubstr("rank 0 (pid " + std::to_string(job.command().pid()) + ") has ended"));
}

TEST(RankFaults, SigintToRankZeroStopsTheWholeJob) {
  RunningJob job;
  ASSERT_GT(job.wait_until_training(), 0) << "the job did not start training: " << job.command().err();
  const std::vector<std::int64_t> processes = descendants(job.command().pid());
  ASSERT_EQ(::kill(job.command().pid(), SIGINT), 0);
  const std::optional<int> status = job.command().wait_for_exit(kDistTimeoutS);
  ASSERT_TRUE(status.has_value()) << "the job did not stop";
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 130);
  const std::vector<std::int64_t> left = testing::wait_until_gone(processes, 5.0);
  EXPECT_TRUE(left.empty()) << left.size() << " processes of the job outlived it";
}

TEST(RankUsage, BadRanksAndMismatchedEnvironmentExitTwoWithOneLine) {
  const std::string binary = testing::dlreset_binary();
  const testing::CommandResult zero = testing::run_shell(binary + " run --ranks 0");
  EXPECT_EQ(zero.status, 2);
  EXPECT_THAT(zero.err, HasSubstr("--ranks"));
  const testing::CommandResult mismatch =
      testing::run_shell("RANK=0 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=29999 " + binary + " run --ranks 2");
  EXPECT_EQ(mismatch.status, 2);
  EXPECT_THAT(mismatch.err, HasSubstr("--ranks 2 disagrees with WORLD_SIZE=3"));
  const testing::CommandResult partial = testing::run_shell("RANK=1 " + binary + " run");
  EXPECT_EQ(partial.status, 2);
  EXPECT_THAT(partial.err, HasSubstr("WORLD_SIZE expected, but not set"));
  for (const testing::CommandResult* result : {&zero, &mismatch, &partial}) {
    EXPECT_EQ(occurrences(result->err, "\n"), 1u) << result->err;
  }
}

TEST(RankUsage, PortInUseExitsOneWithOneLine) {
  const testing::HeldPort held;
  ASSERT_GT(held.port(), 0);
  const testing::CommandResult result = testing::run_shell(testing::dlreset_binary() + " run --ranks 2 --master-port " +
                                                           std::to_string(held.port()) + " --no-progress");
  EXPECT_EQ(result.status, 1);
  EXPECT_THAT(result.err, HasSubstr("the port is in use"));
  EXPECT_EQ(occurrences(result.err, "\n"), 1u) << result.err;
}

}  // namespace
}  // namespace dlreset::app
