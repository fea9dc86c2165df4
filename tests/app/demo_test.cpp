// `dlreset demo`, as a workshop runs it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/command.h"

namespace dlreset::app {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// Small limits: the demo's steps, not its timings, are under test.
std::string demo(const std::string& args) {
  return testing::dlreset_binary() + " demo --epochs 2 --limit-train-batches 3 --limit-val-batches 2 --workers 1 " +
         args;
}

TEST(Demo, RunsAllSixStepsEndToEnd) {
  const testing::CommandResult result = testing::run_shell(demo("--color never"));
  ASSERT_EQ(result.status, 0) << result.err;
  for (const char* heading : {"Step 1/6: The symptom", "Step 2/6: The profiler", "Step 3/6: The anomaly",
                              "Step 4/6: The hook", "Step 5/6: The root cause", "Step 6/6: The fix"}) {
    EXPECT_THAT(result.out, HasSubstr(heading));
  }
  EXPECT_THAT(result.out, HasSubstr("Look for:"));
  // Step 4's traceback, innermost last, each frame with the file it mirrors.
  EXPECT_THAT(result.out, HasSubstr("Traceback (most recent call last)"));
  EXPECT_THAT(result.out, HasSubstr("File \"repro/fetching.cpp\", line "));
  EXPECT_THAT(result.out,
              HasSubstr("in repro::DataFetcher::reset  (mirrors pytorch_lightning/utilities/fetching.py @ 1.5.0)"));
  EXPECT_THAT(result.out, HasSubstr("in lightning::TrainingEpochLoop::on_run_start"));
  // Step 5's diff moves the shutdown from reset() to teardown().
  EXPECT_THAT(result.out, HasSubstr("+void DataFetcher::teardown() {"));
  EXPECT_THAT(result.out, HasSubstr("-void DataFetcher::teardown() { reset(); }"));
  // Step 2's profiler table and step 6's guard.
  EXPECT_THAT(result.out, HasSubstr("run_training_epoch"));
  // Run from this build tree, the guard is its own regression suite, named by its path.
  const std::filesystem::path build = std::filesystem::path(testing::dlreset_binary()).parent_path().parent_path();
  EXPECT_THAT(result.out, HasSubstr("ctest --test-dir " + build.string() + " -L regression"));
  EXPECT_THAT(result.out, Not(HasSubstr("\033["))) << "--color never";
}

TEST(Demo, StepRunsOneStepOnly) {
  const testing::CommandResult result = testing::run_shell(demo("--step 5 --color never"));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("Step 5/6"));
  EXPECT_THAT(result.out, Not(HasSubstr("Step 4/6")));
  EXPECT_THAT(result.out, Not(HasSubstr("Step 6/6")));
}

TEST(Demo, UnknownStepExitsTwoWithTheValidRange) {
  for (const char* step : {"7", "0", "two"}) {
    const testing::CommandResult result = testing::run_shell(demo(std::string("--step ") + step));
    EXPECT_EQ(result.status, 2) << step;
    EXPECT_THAT(result.err, HasSubstr("--step")) << step;
    EXPECT_THAT(result.err, HasSubstr("1 to 6")) << step;
    EXPECT_EQ(result.out, "") << step;
  }
}

TEST(Demo, BadColorExitsTwo) {
  const testing::CommandResult result = testing::run_shell(demo("--color sometimes"));
  EXPECT_EQ(result.status, 2);
  EXPECT_THAT(result.err, HasSubstr("--color"));
}

TEST(Demo, ColorAlwaysColoursAndAutoDoesNotOnAPipe) {
  EXPECT_THAT(testing::run_shell(demo("--step 5 --color always")).out, HasSubstr("\033["));
  EXPECT_THAT(testing::run_shell(demo("--step 5")).out, Not(HasSubstr("\033[")));
}

TEST(Demo, InteractiveWaitsForEnterAndStopsOnQ) {
  const testing::CommandResult result = testing::run_shell("printf '\\nq\\n' | " + demo("--interactive --color never"));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("Press Enter for step 2"));
  EXPECT_THAT(result.out, HasSubstr("Step 2/6"));
  EXPECT_THAT(result.out, Not(HasSubstr("Step 3/6")));
}

}  // namespace
}  // namespace dlreset::app
