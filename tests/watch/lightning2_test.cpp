// What real Lightning 2.x does by default, reduced to plain torch programs
// (tests/watch/lightning2/), under the watcher: a launcher that execs python after a command
// substitution, loaders without persistent workers read by length, an iterator dropped as its
// workers start, and a second iter() after a resume. Each program has exact expectations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/fixtures.h"
#include "tests/support/python_torch.h"
#include "tests/watch/watch_json.h"
#include "tests/watch/watched.h"

namespace dlreset::watch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string program(const std::string& name) { return source_dir() + "/tests/watch/lightning2/" + name; }

/// Runs `dlreset-watch --no-live --json ... FLAGS -- COMMAND` and reads its report.
Watched watch(const testing::TempDir& dir, const std::string& flags, const std::string& command) {
  return watch_command(dir.file("watch.json"), "--no-live " + flags, command);
}

/// The programs of tests/watch/lightning2/ under the watcher, each in a folder of its own.
class RealLightning : public ::testing::Test {
 protected:
  void SetUp() override { DLRESET_REQUIRE_PYTHON_TORCH(); }
  /// Watches the program `args` names, run by python3, with `flags`.
  Watched watch_python(const std::string& flags, const std::string& args) const {
    return watch(dir_, flags, watch_test_program("lightning2/" + args));
  }
  testing::TempDir dir_;
};

/// A program clean but for one extra iterator, whose two workers were the most alive at once:
/// its counts, and --expect-clean failing on it.
void expect_one_extra_iterator(const Watched& watched) {
  EXPECT_EQ(check_counts(watched.report), counts(2, {{"extra_iterators", 1}})) << watched.result.err;
  EXPECT_EQ(watched.result.status, kGateFailed) << watched.result.err;
}

/// The gates that failed, by flag.
std::map<std::string, long> failed_gates(const nlohmann::json& report) {
  std::map<std::string, long> failed;
  for (const auto& gate : report["gates"]) {
    if (!gate["passed"].get<bool>()) failed[gate["flag"].get<std::string>()] = gate["count"].get<long>();
  }
  return failed;
}

class ExecWrapper : public ::testing::TestWithParam<std::string> {};

TEST_P(ExecWrapper, TheSubshellOfALauncherThatExecsPythonIsNoWorker) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  testing::TempDir dir;
  const Watched watched =
      watch(dir, "--mode " + GetParam() + " --expect-clean --max-live-workers 2",
            "bash " + program("exec_wrapper.sh") + " " + watch_test_program("train_loop.py --workers 2 --epochs 2"));
  const nlohmann::json& report = watched.report;
  ASSERT_FALSE(report.empty()) << watched.result.err;
  EXPECT_EQ(watched.result.status, 0) << watched.result.err;
  // The program's own two persistent workers, in one generation: not a third from the subshell.
  EXPECT_EQ(report["workers"], 2) << watched.result.err;
  EXPECT_EQ(report["generations"].size(), 1u) << watched.result.err;
  EXPECT_EQ(count_role(report, "worker"), 2) << watched.result.err;
  EXPECT_EQ(check_counts(report), counts(2)) << watched.result.err;
  int hooked = 0;
  for (const auto& process : report["python"]["processes"]) hooked += process["hook_loaded"].get<bool>();
  EXPECT_EQ(hooked, 1) << watched.result.err;
  // The events connector sees the subshell and its dirname, both short-lived: two others.
  if (GetParam() == "connector") {
    EXPECT_EQ(count_role(report, "other"), 2) << watched.result.err;
  }
}

INSTANTIATE_TEST_SUITE_P(RealLightning, ExecWrapper, ::testing::Values("connector", "poll"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST_F(RealLightning, NonPersistentLoadersReadByLengthOverlapTheirPassesWithoutARespawn) {
  // Lightning 2.0.3's three validation loaders, three passes each.
  const Watched watched = watch_python("--expect-clean --max-live-workers 2", "by_length.py --loaders 3 --passes 3");
  const nlohmann::json& report = watched.report;
  const std::string& err = watched.result.err;
  ASSERT_TRUE(watched.program_succeeded()) << err;
  EXPECT_EQ(report["workers"], 18) << err;
  EXPECT_EQ(report["generations"].size(), 9u) << err;
  // A new set a pass is what persistent_workers=False asks for: no respawn. The peak is L1's
  // next pass starting beside its last pass's set, with L2's and L3's: 8.
  EXPECT_EQ(check_counts(report), counts(8)) << err;
  EXPECT_EQ(failed_gates(report), (std::map<std::string, long>{{"--max-live-workers", 8}})) << err;
  EXPECT_EQ(watched.result.status, kGateFailed) << err;
  EXPECT_EQ(report["peak_live_workers"]["overlapping"], nlohmann::json::array({"L1"})) << err;
  EXPECT_THAT(err, HasSubstr("more than the 2 allowed (--max-live-workers): the next pass of L1 (not persistent) "
                             "started its workers before the last pass's workers had ended.\n"));
  EXPECT_THAT(err, HasSubstr("  8 workers were alive at once because the next pass of L1 (not persistent) started "
                             "its workers before the last pass's workers had ended: torch ends a pass's workers only "
                             "when its iterator is exhausted or collected"));
  EXPECT_THAT(err, HasSubstr("18 workers started in all in 9 generations and none was replaced, but L1, L2, L3 are "
                             "not persistent (persistent_workers=False)"));
  EXPECT_THAT(err, Not(HasSubstr("respawn")));
}

TEST_F(RealLightning, AnIteratorDroppedAsItsWorkersStartThrewAwayAtMostWhatItAskedFor) {
  const Watched watched = watch_python("--expect-clean", "dropped_as_started.py");
  const std::string& err = watched.result.err;
  ASSERT_TRUE(watched.program_succeeded()) << err;
  expect_one_extra_iterator(watched);
  // It asked its two workers for 4 batches and received none; the workers were still starting.
  EXPECT_THAT(err, HasSubstr("1 iterator began a pass and handed out no batch: up to 4 prefetched batches were "
                             "thrown away: asked of the workers, none known to be ready.\n"));
  EXPECT_THAT(err, HasSubstr("before it was collected (its workers shut down by __del__)"));
  EXPECT_THAT(err, Not(HasSubstr("4 prefetched batches were thrown away.")));
}

TEST_F(RealLightning, ASecondIterAfterAResumeShowsInTheWholeStackThatEndedTheFirstPass) {
  const Watched watched = watch_python("--expect-clean", "resume_double_iter.py --epochs 2");
  const std::string& err = watched.result.err;
  ASSERT_TRUE(watched.program_succeeded()) << err;
  // Three passes of a loader without persistent workers: three sets, none a respawn; the first
  // pass ended unread.
  EXPECT_EQ(watched.report["workers"], 6) << err;
  expect_one_extra_iterator(watched);
  // The stack that made the wasted iterator, and the whole stack of the call that ended it,
  // down from the second iter() to the helper that shut its workers down.
  EXPECT_THAT(err, HasSubstr(", in setup_data\n        iter(self.combined)"));
  EXPECT_THAT(err, HasSubstr("shut down by _shutdown_workers_and_reset_iterator(), which ended the pass unread:\n"));
  EXPECT_THAT(err, HasSubstr(", in on_run_start\n        iter(self.combined)"));
  EXPECT_THAT(err, HasSubstr(", in _shutdown_workers_and_reset_iterator\n        iterator._shutdown_workers()"));
}

}  // namespace
}  // namespace dlreset::watch
