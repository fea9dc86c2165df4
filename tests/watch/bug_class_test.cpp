// The bug class under the watcher: for each public bug of the class, a plain torch 1.13
// program that does what the original code did (tests/watch/bug_class/), run as it shipped and
// as it was fixed. The bug must give its exact counts and fail the gates; the fix must give a
// clean report and pass them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/support/python_torch.h"
#include "tests/watch/watch_json.h"
#include "tests/watch/watched.h"

namespace dlreset::watch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct BugCase {
  std::string program;  ///< tests/watch/bug_class/<program>.py
  std::string gates;    ///< What a CI job would hold it to.
  Counts bug;           ///< Every check's count as shipped.
  Counts fixed;         ///< As fixed: the same, but what the fix removed.
  /// Lines the summary of the bug must hold (its traceback's frames, its finding).
  std::vector<std::string> bug_says;
};

std::string case_name(const ::testing::TestParamInfo<BugCase>& info) { return info.param.program; }

class BugClass : public ::testing::TestWithParam<BugCase> {
 protected:
  Watched watch_program(bool fixed) {
    const BugCase& bug = GetParam();
    return watch_command(dir_.file(fixed ? "fixed.json" : "bug.json"), "--no-live --epoch-regex '^Epoch' " + bug.gates,
                         watch_test_program("bug_class/" + bug.program + ".py" + (fixed ? " --fixed" : "")));
  }

  testing::TempDir dir_;
};

TEST_P(BugClass, TheBugGivesItsCountsAndFailsTheGates) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Watched bug = watch_program(false);
  ASSERT_FALSE(bug.report.empty()) << bug.result.err;
  EXPECT_EQ(bug.report["exit_status"], 0) << "the program itself must succeed: " << bug.result.err;
  EXPECT_EQ(check_counts(bug.report), GetParam().bug) << bug.result.err;
  EXPECT_EQ(bug.result.status, kGateFailed) << bug.result.err;
  for (const std::string& line : GetParam().bug_says) EXPECT_THAT(bug.result.err, HasSubstr(line));
  EXPECT_EQ(bug.report["python"]["processes"][0]["hook_loaded"], true) << bug.result.err;
}

TEST_P(BugClass, TheFixGivesACleanReportAndPassesTheGates) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const Watched fixed = watch_program(true);
  ASSERT_FALSE(fixed.report.empty()) << fixed.result.err;
  EXPECT_EQ(check_counts(fixed.report), GetParam().fixed) << fixed.result.err;
  EXPECT_EQ(fixed.result.status, 0) << fixed.result.err;
  EXPECT_EQ(fixed.report["findings"].size(), 0u) << fixed.result.err;
  EXPECT_THAT(fixed.result.err, Not(HasSubstr("more than the")));
}

INSTANTIATE_TEST_SUITE_P(
    Watch, BugClass,
    ::testing::Values(
        // Every epoch's reset shuts the persistent workers down: two respawns in three epochs,
        // both from the fetcher's reset, whose frames the traceback shows.
        BugCase{"lightning_10389",
                "--expect-clean",
                counts(2, {{"respawns", 2}}),
                counts(2),
                {"2 respawns, all from this stack:",
                 ", in reset\n        _shutdown_workers_and_reset_iterator(self.dataloader)",
                 ", in _shutdown_workers_and_reset_iterator\n        dataloader._iterator._shutdown_workers()"}},
        // Three validation loaders of two workers: six alive at once, where two would do.
        BugCase{"lightning_17641",
                "--expect-clean --max-live-workers 2",
                counts(6),
                counts(2),
                {"6 workers were alive at once", "--max-live-workers"}},
        // The check's iter() starts a pass that the first epoch's iter() throws away: its
        // prefetch_factor x workers = 4 batches.
        BugCase{"lightning_18414",
                "--expect-clean",
                counts(2, {{"extra_iterators", 1}}),
                counts(2),
                {"4 prefetched batches were thrown away", "in _check_dataloader_iterable\n        iter(dataloader)"}},
        // Resumed, the epoch makes a second iterator: a second set of workers, the first unread.
        BugCase{"lightning_19427",
                "--expect-clean",
                counts(4, {{"extra_iterators", 1}}),
                counts(2),
                {"4 prefetched batches were thrown away", "in setup_data\n        self.data_iter = iter(self.loader)"}},
        // The resumed epoch's pass is drawn with epoch 0 before set_epoch(2).
        BugCase{"lightning_21938",
                "--expect-clean",
                counts(2, {{"late_set_epoch", 1}}),
                counts(2),
                {"set_epoch(2) on sampler S1", "with epoch 0", "replays epoch 0's order"}},
        // A new persistent loader each epoch whose workers atexit keeps: 2 pipes a worker pile
        // up at each of the 3 epochs after the first.
        BugCase{"pytorch_91252",
                "--expect-clean --max-fd-growth 0",
                counts(2, {{"fd_growth", 12}}),
                counts(2),
                {"Descriptors piled up at every pass: pipes grew by 4 a pass in pid ",
                 "12 descriptors piled up in pid ", "more than the 0 allowed (--max-fd-growth)"}},
        // A list of 2 million strings read by 2 fork workers in shuffled order: each worker copies
        // the pages of the strings it reads (about 127 MiB); the numpy array is never written.
        BugCase{"pytorch_13246",
                "--expect-clean --max-copy-on-read 0 --max-worker-memory 150",
                counts(2, {{"copy_on_read", 2}}),
                counts(2),
                {"Workers' memory grew as they read: 2 fork workers of L1 of pid ",
                 "copied what they read of its dataset (Names), inherited by fork: each one's private memory grew by ",
                 "2 workers copied what they read of a dataset inherited by fork, more than the 0 allowed "
                 "(--max-copy-on-read)",
                 "more than the 150 MiB allowed (--max-worker-memory)"}},
        // A new persistent eval loader at each of three evaluations: the first two keep their
        // workers, so the train loader's 2 and three eval loaders' 2 each are alive at the end,
        // and each left running keeps 10 pipes (its queues, its workers'), counted at the train
        // loader's next 2 passes.
        BugCase{"transformers_28469",
                "--expect-clean",
                counts(8, {{"leaked_workers", 4}, {"fd_growth", 20}}),
                counts(4),
                {"4 workers were leaked", "a loader of the same kind, still had 2 alive"}}),
    case_name);

}  // namespace
}  // namespace dlreset::watch
