// The process group across real processes: ranks of tests/distributed/rank_probe.cpp started at once,
// as a launcher starts them, on loopback; and rank 0's wait for the others, in this process.
// Counted and compared; a timeout here bounds a hang.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <future>
#include <string>
#include <vector>

#include "harness/distributed/process_group.h"
#include "tests/support/command.h"
#include "tests/support/elapsed.h"
#include "tests/support/held_port.h"

namespace dlreset::distributed {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

/// A TCP port nobody listens on now, from the kernel: each test gets its own, so suites that
/// run in parallel do not meet on one store.
int free_port() { return testing::HeldPort().port(); }

/// Runs one rank of a job of `world_size` on `port`, giving every wait `timeout_ms`.
testing::CommandResult run_rank(int rank, int world_size, int port, int timeout_ms) {
  return testing::run_shell("RANK=" + std::to_string(rank) + " WORLD_SIZE=" + std::to_string(world_size) +
                            " MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) +
                            " DLRESET_PROBE_TIMEOUT_MS=" + std::to_string(timeout_ms) + " " DLRESET_RANK_PROBE);
}

TEST(ProcessGroup, TwoRanksAverageATensorOverGloo) {
  constexpr int kRanks = 2;
  const int port = free_port();
  std::vector<std::future<testing::CommandResult>> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.push_back(std::async(std::launch::async, run_rank, rank, kRanks, port, 30000));
  }
  for (int rank = 0; rank < kRanks; ++rank) {
    const testing::CommandResult result = ranks[static_cast<std::size_t>(rank)].get();
    EXPECT_EQ(result.status, 0) << "rank " << rank << ": " << result.err;
    // (1 + 2) / 2 on both
    EXPECT_EQ(result.out, "rank " + std::to_string(rank) + " of 2: mean 1.500\n");
  }
}

TEST(ProcessGroup, ARankWhoseOthersNeverComeGivesUpAfterTheTimeoutSayingSo) {
  constexpr int kTimeoutMs = 2000;
  const auto start = Clock::now();
  const testing::CommandResult alone = run_rank(0, 2, free_port(), kTimeoutMs);
  const double took_s = testing::seconds_since(start);
  EXPECT_EQ(alone.status, 1) << alone.err;
  EXPECT_THAT(alone.err,
              HasSubstr("Rank 0 of 2 gave up after 2 s waiting for the other ranks to reach its store on 127.0.0.1:"));
  EXPECT_THAT(alone.err, HasSubstr("start every rank with the same WORLD_SIZE, MASTER_ADDR and MASTER_PORT"));
  EXPECT_THAT(alone.err, ::testing::Not(HasSubstr("frame #"))) << "one sentence, no C++ backtrace";
  // The 2 s wait, the program's start and LibTorch's load; never the default minute.
  EXPECT_LT(took_s, 30.0) << "the rank waited past its timeout";
}

/// Rank 0 of two, in this process, waiting for a rank 1 that never comes.
Rendezvous rank_zero_of_two(std::chrono::milliseconds timeout) {
  Rendezvous job;
  job.world_size = 2;
  job.master_port = free_port();
  job.timeout = timeout;
  return job;
}

TEST(ProcessGroup, AWatcherThatSeesADeathEndsRankZerosWaitAtThatCall) {
  constexpr int kCallThatSeesTheDeath = 3;
  int calls = 0;
  try {
    ProcessGroup group(rank_zero_of_two(std::chrono::seconds(600)), {}, [&](std::chrono::milliseconds) {
      if (++calls == kCallThatSeesTheDeath) throw DistError("rank 1 died");
    });
    FAIL() << "rank 0 formed a group of two alone";
  } catch (const DistError& error) {
    EXPECT_STREQ(error.what(), "rank 1 died");
  }
  EXPECT_EQ(calls, kCallThatSeesTheDeath) << "one call between reads of the count, none after the death";
}

TEST(ProcessGroup, AWatcherThatSeesNothingLeavesTheTimeoutToEndTheWait) {
  int calls = 0;
  try {
    ProcessGroup group(rank_zero_of_two(std::chrono::seconds(kMinTimeoutS)), {},
                       [&](std::chrono::milliseconds) { ++calls; });
    FAIL() << "rank 0 formed a group of two alone";
  } catch (const DistError& error) {
    EXPECT_THAT(error.what(), HasSubstr("Rank 0 of 2 gave up after 1 s waiting for the other ranks"));
    EXPECT_THAT(error.what(), HasSubstr("(timed out)"));
  }
  EXPECT_GE(calls, 1) << "the watcher was never asked";
}

TEST(ProcessGroup, APortInUseIsNamed) {
  const testing::HeldPort held;
  ASSERT_GT(held.port(), 0);
  const int port = held.port();
  const testing::CommandResult result = run_rank(0, 2, port, 2000);
  EXPECT_EQ(result.status, 1);
  EXPECT_THAT(result.err, HasSubstr("could not serve the job's store on 127.0.0.1:" + std::to_string(port)));
  EXPECT_THAT(result.err, HasSubstr("in use"));
}

}  // namespace
}  // namespace dlreset::distributed
