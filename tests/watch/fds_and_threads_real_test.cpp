// Descriptors that pile up, and workers forked beside threads, in real programs under `dlreset
// watch`: pytorch#91252's loader made again every epoch (tests/watch/bug_class/pytorch_91252.py),
// whose pipes the program counts itself, against its fixed twin; and a loop whose fork workers
// start while a thread of the program holds a lock (tests/watch/fork_beside_thread.py), against
// its spawn twin. The note on threads is information: it never changes a count or the status.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/support/fixtures.h"
#include "tests/support/python_torch.h"
#include "tests/watch/watch_json.h"
#include "tests/watch/watched.h"

namespace dlreset::watch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class FdsAndThreads : public ::testing::Test {
 protected:
  /// Watches `program` (under tests/watch/) with `arguments` and the gate `gates`.
  Watched watch(const std::string& program, const std::string& arguments, const std::string& gates = "") {
    return watch_command(dir_.file("report" + std::to_string(++runs_) + ".json"), "--no-live " + gates,
                         watch_test_program(program + " " + arguments));
  }

  /// What the program printed after `label` on a line of its own: "" where it printed none.
  static std::string printed(const std::string& out, const std::string& label) {
    std::smatch match;
    const std::regex line(label + ": ([0-9, ]+)\n");
    return std::regex_search(out, match, line) ? match[1].str() : "";
  }

  /// What the program printed as "pipes piled up: N"; -1 where it printed none.
  static long pipes_piled_up(const std::string& out) {
    const std::string count = printed(out, "pipes piled up");
    return count.empty() ? -1 : std::stol(count);
  }

  testing::TempDir dir_;
  int runs_ = 0;
};

TEST_F(FdsAndThreads, ALoaderMadeAgainEveryEpochPilesUpThePipesTheProgramCounted) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Watched bug = watch("bug_class/pytorch_91252.py", "", "--max-fd-growth 0");
  ASSERT_FALSE(bug.report.empty()) << bug.result.err;
  const long counted = pipes_piled_up(bug.result.out);
  EXPECT_EQ(counted, 12) << bug.result.out;  // 2 pipes x 2 workers x 3 epochs after the first
  EXPECT_EQ(check_counts(bug.report)["fd_growth"], counted) << bug.result.err;
  ASSERT_EQ(bug.report["fd_growth"].size(), 1u) << bug.result.err;
  EXPECT_EQ(bug.report["fd_growth"][0]["type"], "pipes");
  EXPECT_EQ(bug.report["fd_growth"][0]["boundaries"], 3);
  EXPECT_EQ(bug.result.status, kGateFailed) << bug.result.err;
  EXPECT_THAT(bug.result.err, HasSubstr("  Descriptors piled up at every pass: pipes grew by 4 a pass in pid "));
  // The counts the program read of its own pipes at each epoch's start, as the watcher did.
  const std::string pipes = printed(bug.result.out, "pipes at each epoch's start");
  EXPECT_THAT(bug.result.err, HasSubstr(", at each of the 3 passes of L1 (Squares, batch 8, 2 fork workers, "
                                        "persistent) and the 3 loaders made like it, after the first (" +
                                        pipes + "): an iterator that is not shut down keeps its queues"));
  EXPECT_THAT(bug.result.err, HasSubstr(" descriptors piled up in pid "));
  EXPECT_THAT(bug.result.err, HasSubstr("more than the 0 allowed (--max-fd-growth)"));

  const Watched fixed = watch("bug_class/pytorch_91252.py", "--fixed", "--max-fd-growth 0");
  ASSERT_FALSE(fixed.report.empty()) << fixed.result.err;
  EXPECT_EQ(pipes_piled_up(fixed.result.out), 0) << fixed.result.out;
  EXPECT_EQ(check_counts(fixed.report)["fd_growth"], 0) << fixed.result.err;
  EXPECT_EQ(fixed.report["findings"].size(), 0u) << fixed.result.err;
  EXPECT_EQ(fixed.result.status, 0) << fixed.result.err;
}

TEST_F(FdsAndThreads, ForkWorkersBesideAThreadHoldingALockGetANoteAndNoFinding) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Watched forked = watch("fork_beside_thread.py", "", "--expect-clean");
  ASSERT_FALSE(forked.report.empty()) << forked.result.err;
  EXPECT_EQ(check_counts(forked.report), counts(2)) << forked.result.err;
  EXPECT_EQ(forked.report["findings"].size(), 0u) << forked.result.err;
  EXPECT_EQ(forked.result.status, 0) << forked.result.err;
  ASSERT_EQ(forked.report["fork_threads"].size(), 1u) << forked.result.err;
  EXPECT_EQ(forked.report["fork_threads"][0]["threads"], 2);
  EXPECT_THAT(forked.result.err, HasSubstr("\n  note: 2 workers of L1 of pid "));
  EXPECT_THAT(forked.result.err,
              HasSubstr(" were forked from a process with 2 threads ('holder' and the one that made the iterator); a "
                        "lock held by one of them at fork time deadlocks the worker: use spawn or forkserver.\n"));

  const Watched spawned = watch("fork_beside_thread.py", "--spawn", "--expect-clean");
  ASSERT_FALSE(spawned.report.empty()) << spawned.result.err;
  EXPECT_EQ(check_counts(spawned.report), counts(2)) << spawned.result.err;
  EXPECT_EQ(spawned.report["fork_threads"].size(), 0u) << spawned.result.err;
  EXPECT_THAT(spawned.result.err, Not(HasSubstr("note:")));
  EXPECT_EQ(spawned.result.status, 0) << spawned.result.err;
}

}  // namespace
}  // namespace dlreset::watch
