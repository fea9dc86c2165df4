// `dlreset run` stopped by a signal while its workers run: it must shut them down, exit with
// 128 + the signal, and leave no worker behind; SIGKILL, which no program can handle, must
// still take the workers with it (PR_SET_PDEATHSIG).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process_census.h"
#include "tests/support/running_command.h"

namespace dlreset::app {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using testing::seconds_since;

/// The bound the command keeps: every worker gone this soon after the signal.
constexpr double kWorkersGoneS = 2.0;
/// How long the command may take to exit after the signal before the test calls it hung.
constexpr double kExitDeadlineS = 6.0;
/// Generous: a spawned worker starts a program that loads LibTorch (~0.5 s), then loads its
/// data set (~0.3 s), four at a time on two cores.
constexpr double kStartDeadlineS = 30.0;

struct SignalCase {
  int signal_number;
  const char* start_method;
};

class StopSignal : public ::testing::TestWithParam<SignalCase> {};

std::string case_name(const ::testing::TestParamInfo<SignalCase>& info) {
  return std::string(info.param.signal_number == SIGINT    ? "sigint"
                     : info.param.signal_number == SIGTERM ? "sigterm"
                                                           : "sigkill") +
         "_" + info.param.start_method;
}

TEST_P(StopSignal, StopsTheWorkersAndExitsWithTheSignalsStatus) {
  const SignalCase param = GetParam();
  const bool processes = std::string(param.start_method) != "thread";
  testing::RunningCommand command({DLRESET_BINARY, "run", "--workers", "2", "--start-method", param.start_method,
                                   "--epochs", "1000", "--limit-train-batches", "50", "--limit-val-batches", "5",
                                   "--device", "cpu", "--no-progress"});
  ASSERT_GT(command.pid(), 0) << "could not start " << DLRESET_BINARY;
  ASSERT_TRUE(command.wait_until_training(processes ? 4 : 0, kStartDeadlineS))
      << "training did not start: " << command.err();
  // Let the workers get past their data set loads and into steady batches.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::vector<std::int64_t> workers = testing::child_pids(command.pid());
  EXPECT_EQ(workers.size(), processes ? 4u : 0u);

  const auto signalled = Clock::now();
  ASSERT_EQ(::kill(command.pid(), param.signal_number), 0);
  const std::optional<int> status = command.wait_for_exit(kExitDeadlineS);
  ASSERT_TRUE(status.has_value()) << "dlreset run did not exit within " << kExitDeadlineS << " s of the signal";
  const double exit_s = seconds_since(signalled);
  // After SIGINT or SIGTERM dlreset reaps its workers itself: they must be gone. After
  // SIGKILL they die by PR_SET_PDEATHSIG and init reaps their zombies when it gets to it
  // (here it takes a second or more), so they must have stopped running.
  const bool reaped_by_dlreset = param.signal_number != SIGKILL;
  const double budget_s = std::max(0.0, kWorkersGoneS - exit_s);
  const std::vector<std::int64_t> left =
      reaped_by_dlreset ? testing::wait_until_gone(workers, budget_s) : testing::wait_until_dead(workers, budget_s);
  EXPECT_TRUE(left.empty()) << left.size() << " workers outlived dlreset run by " << kWorkersGoneS << " s";
  std::printf("signal %d, %s workers: exited %.3f s after the signal, workers %s %.3f s after\n", param.signal_number,
              param.start_method, exit_s, reaped_by_dlreset ? "reaped" : "dead", seconds_since(signalled));

  if (param.signal_number == SIGKILL) {
    EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL);
    return;
  }
  ASSERT_TRUE(WIFEXITED(*status)) << "killed by signal " << WTERMSIG(*status) << " instead of handling it";
  EXPECT_EQ(WEXITSTATUS(*status), 128 + param.signal_number);
  const std::string err = command.err();
  EXPECT_THAT(err, HasSubstr("dlreset: interrupted by signal " + std::to_string(param.signal_number)));
  EXPECT_THAT(err, HasSubstr("the DataLoader workers were shut down"));
}

INSTANTIATE_TEST_SUITE_P(Cli, StopSignal,
                         ::testing::Values(SignalCase{SIGINT, "thread"}, SignalCase{SIGINT, "fork"},
                                           SignalCase{SIGINT, "spawn"}, SignalCase{SIGTERM, "thread"},
                                           SignalCase{SIGTERM, "fork"}, SignalCase{SIGTERM, "spawn"},
                                           SignalCase{SIGKILL, "fork"}, SignalCase{SIGKILL, "spawn"}),
                         case_name);

/// How soon after the kill of an idle validation worker the run must have exited, the report
/// and the shutdown of every loader included. Measured here: 0.8 to 2.4 s with spawn workers on
/// two busy cores (docs/reliability.md); before the death watch the run went on to the next
/// validation, 13 s and more later, an epoch of 938 batches.
constexpr double kIdleDeathExitDeadlineS = 6.0;

class KilledIdleWorker : public ::testing::TestWithParam<const char*> {};

/// A real run's case: the validation loader's workers are persistent and idle while the model
/// trains, and one is SIGKILLed. Torch's SIGCHLD handler raises it inside the training loop;
/// dlreset's death watch must stop the run there too, not at the next validation, with the
/// same WorkerDiedError, exit status 1, and every worker gone.
TEST_P(KilledIdleWorker, StopsTheRunDuringTrainingNamingTheValidationWorker) {
  testing::RunningCommand command({DLRESET_BINARY, "run", "--workers", "2", "--start-method", GetParam(), "--epochs",
                                   "1000", "--limit-val-batches", "5", "--device", "cpu", "--no-progress"});
  ASSERT_GT(command.pid(), 0) << "could not start " << DLRESET_BINARY;
  ASSERT_TRUE(command.wait_until_training(4, kStartDeadlineS)) << "training did not start: " << command.err();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<std::int64_t> workers = testing::child_pids(command.pid());
  ASSERT_EQ(workers.size(), 4u);
  // The sanity check starts the validation loader's workers first: the two lowest pids.
  std::sort(workers.begin(), workers.end());
  const std::int64_t victim = workers.front();
  const auto killed = Clock::now();
  ASSERT_EQ(::kill(static_cast<pid_t>(victim), SIGKILL), 0);
  const std::optional<int> status = command.wait_for_exit(kIdleDeathExitDeadlineS);
  ASSERT_TRUE(status.has_value()) << "dlreset run went on training " << kIdleDeathExitDeadlineS
                                  << " s after its idle validation worker was killed";
  std::printf("%s workers: exited %.3f s after the kill of an idle validation worker\n", GetParam(),
              seconds_since(killed));
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1);
  const std::string err = command.err();
  EXPECT_THAT(err, HasSubstr("DataLoader worker (pid " + std::to_string(victim) + ") is killed by signal: Killed."));
  EXPECT_THAT(err, HasSubstr("It was worker 0 of loader 'val', ended by signal 9"));
  EXPECT_TRUE(testing::wait_until_gone(workers, kWorkersGoneS).empty()) << "workers outlived dlreset run";
}

INSTANTIATE_TEST_SUITE_P(Cli, KilledIdleWorker, ::testing::Values("fork", "spawn"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace dlreset::app
