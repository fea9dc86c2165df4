// Loaders that hang under `dlreset watch --hang-timeout` (tests/watch/bug_class/hang.py), each
// with its twin that does not: workers blocked for ever on a queue nothing fills, against the same
// wait with a timeout; fork workers deadlocked on a lock a thread of the program held at the fork,
// against spawn workers. The watch must end each hung program with its own exit status and name
// the frame every process is stuck in; it must never call a slow program hung, and where asked
// only to report, must let a program whose pause ends go on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/command.h"
#include "tests/support/fixtures.h"
#include "tests/support/python_torch.h"
#include "tests/watch/watch_json.h"
#include "tests/watch/watched.h"

namespace dlreset::watch {
namespace {

using ::testing::HasSubstr;

class Hang : public ::testing::Test {
 protected:
  /// Watches hang.py's `hang_case` (as fixed where `fixed`) with `flags` before the command; with
  /// `live`, the lines printed as the program runs too.
  Watched watch_case(const std::string& hang_case, bool fixed, const std::string& flags, bool live = false) {
    return watch_command(dir_.file(hang_case + (fixed ? "-fixed.json" : ".json")), (live ? "" : "--no-live ") + flags,
                         watch_test_program("bug_class/hang.py --case " + hang_case + (fixed ? " --fixed" : "")));
  }

  /// The processes of the report's only hang, each with its stuck frame, by role.
  static void expect_one_stopped_hang(const Watched& watched, const std::string& rule) {
    ASSERT_FALSE(watched.report.empty()) << watched.result.err;
    EXPECT_EQ(watched.result.status, kExitHung) << watched.result.err;
    EXPECT_EQ(watched.report["watch_exit_status"], kExitHung);
    ASSERT_EQ(watched.report["hangs"].size(), 1u) << watched.result.err;
    const nlohmann::json& hang = watched.report["hangs"][0];
    EXPECT_EQ(hang["rule"], rule);
    EXPECT_EQ(hang["stopped"], true);
    // The workers the watch ended with the program are no deaths.
    EXPECT_EQ(check_counts(watched.report)["worker_deaths"], 0) << watched.result.err;
    EXPECT_THAT(watched.result.err, HasSubstr("the watch ended the program (--on-hang stop)"));
  }

  /// A program that ran to its end: no hang, its own status 0, and a clean report (its two
  /// workers at the peak).
  static void expect_no_hang(const Watched& watched) {
    ASSERT_FALSE(watched.report.empty()) << watched.result.err;
    EXPECT_EQ(watched.result.status, 0) << watched.result.err;
    EXPECT_EQ(watched.report["hangs"].size(), 0u) << watched.result.err;
    EXPECT_EQ(check_counts(watched.report), counts(2)) << watched.result.err;
  }

  /// Watches hang.py's `hang_case` and then its fixed twin, both with `flags`: the case must be
  /// stopped as the report's only hang, seen by `rule`, and its twin must run to its end. The
  /// case's watch, for the test's own checks.
  Watched watch_hang_and_twin(const std::string& hang_case, const std::string& flags, const std::string& rule) {
    Watched bug = watch_case(hang_case, false, flags);
    expect_one_stopped_hang(bug, rule);
    expect_no_hang(watch_case(hang_case, true, flags));
    return bug;
  }

  /// How many of the hang's processes have `role` and a frame of the program's that starts with
  /// `frame`, stuck in it or calling what is stuck.
  static int stuck(const nlohmann::json& hang, const std::string& role, const std::string& frame) {
    int count = 0;
    for (const nlohmann::json& process : hang["processes"]) {
      const std::string in = process["stuck_in"];
      const std::string from = process["called_from"];
      if (std::string(process["role"]).rfind(role, 0) != 0) continue;
      if (in.rfind(frame, 0) == 0 || from.rfind(frame, 0) == 0) ++count;
    }
    return count;
  }

  testing::TempDir dir_;
};

TEST_F(Hang, WorkersBlockedOnAnEmptyQueueAreStoppedWithEveryStack) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Watched bug = watch_hang_and_twin("queue", "--hang-timeout 2", "batches");
  if (HasFatalFailure()) return;
  const nlohmann::json& hang = bug.report["hangs"][0];
  EXPECT_EQ(hang["pass"], 1);
  EXPECT_EQ(hang["batches"], 0);
  // The program and its two workers, each with Python stacks; both workers stuck in the queue's get.
  ASSERT_EQ(hang["processes"].size(), 3u) << bug.result.err;
  for (const nlohmann::json& process : hang["processes"]) EXPECT_EQ(process["source"], "python") << process;
  EXPECT_EQ(stuck(hang, "worker of pid", "__getitem__ ("), 2) << bug.result.err;
  EXPECT_EQ(stuck(hang, "the program", "main ("), 1) << bug.result.err;
  EXPECT_THAT(bug.result.err, HasSubstr("before its first batch"));
  EXPECT_THAT(bug.result.err, HasSubstr("handed out no batch for"));
  EXPECT_THAT(bug.result.err, HasSubstr("main thread, innermost first:"));
}

TEST_F(Hang, ForkWorkersDeadlockedOnALockHeldAtTheForkAreStoppedButSpawnWorkersRun) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  // Spawn workers import torch before their first batch: the timeout leaves them that time.
  const Watched bug = watch_hang_and_twin("lock", "--hang-timeout 8", "batches");
  if (HasFatalFailure()) return;
  const nlohmann::json& hang = bug.report["hangs"][0];
  EXPECT_EQ(stuck(hang, "worker of pid", "__getitem__ ("), 2) << bug.result.err;
  EXPECT_THAT(bug.result.err, HasSubstr("bug_class/hang.py, line"));
  // The cause is told too: the workers were forked beside the thread that held the lock.
  EXPECT_THAT(bug.result.err, HasSubstr("forked from a process with 2 threads ('holder' and"));
}

TEST_F(Hang, ASlowLoaderIsNeverCalledHung) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  // A sample a second, two workers: a batch every half second or so, against a timeout of 3 s.
  const Watched slow = watch_case("slow", false, "--hang-timeout 3");
  expect_no_hang(slow);
  EXPECT_EQ(slow.report["hang_timeout_s"], 3.0);
}

TEST_F(Hang, AReportedHangLetsTheProgramGoOnAndKeepsItsStatus) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Watched paused = watch_case("pause", false, "--hang-timeout 1 --on-hang report", /*live=*/true);
  ASSERT_FALSE(paused.report.empty()) << paused.result.err;
  EXPECT_EQ(paused.result.status, 0) << paused.result.err;
  ASSERT_EQ(paused.report["hangs"].size(), 1u) << paused.result.err;
  EXPECT_EQ(paused.report["hangs"][0]["stopped"], false);
  EXPECT_THAT(paused.result.err, HasSubstr("the watch went on (--on-hang report)"));
  // As it is seen, the hang is told as the summary tells it, not as raw stacks.
  EXPECT_THAT(paused.result.err, HasSubstr("the program is hung; the watch goes on:\n  hung at "));
  EXPECT_THAT(std::string(paused.result.out), HasSubstr("sum 120"));
}

TEST_F(Hang, WithoutTheHookAHangIsATreeWithoutCpuAndItsStacksAreNative) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const testing::CommandResult tool = testing::run_shell("command -v eu-stack || command -v gdb");
  if (tool.status != 0) GTEST_SKIP() << "neither eu-stack (Debian's elfutils) nor gdb is installed";
  const std::string name = tool.out.find("eu-stack") != std::string::npos ? "eu-stack" : "gdb";
  const Watched bug = watch_case("queue", false, "--no-python-trace --hang-timeout 2");
  expect_one_stopped_hang(bug, "cpu");
  if (HasFatalFailure()) return;
  const nlohmann::json& hang = bug.report["hangs"][0];
  ASSERT_EQ(hang["processes"].size(), 3u) << bug.result.err;
  int native = 0;
  for (const nlohmann::json& process : hang["processes"]) native += process["source"] == name ? 1 : 0;
  EXPECT_EQ(native, 3) << bug.result.err;
  EXPECT_THAT(bug.result.err, HasSubstr("the whole process tree used no CPU for"));
}

}  // namespace
}  // namespace dlreset::watch
