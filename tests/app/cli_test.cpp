// The `dlreset` command as a user meets it: run as a separate process.
#include <cstddef>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/command.h"
#include "tests/support/fixtures.h"

namespace dlreset::app {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Result = testing::CommandResult;

/// Runs the dlreset binary with `args` (a shell-quoted string).
Result run_dlreset(const std::string& args) { return testing::run_shell(testing::dlreset_binary() + " " + args); }

const char* kSmallRun = "run --epochs 2 --workers 1 --limit-train-batches 3 --limit-val-batches 2 --no-progress";

/// The binary's main is main_cli, whose table of bad flags cli_input_test.cpp runs in its own
/// process; here one case goes through the binary as a user's shell runs it.
TEST(Cli, BadValuesExitTwoWithOneLineNamingTheFlag) {
  testing::expect_usage_errors(testing::dlreset_binary(), {{"run --workers many", "--workers"}});
}

TEST(Cli, NoSubcommandIsAUsageError) { EXPECT_EQ(run_dlreset("").status, 2); }

TEST(Cli, HelpListsTheRunFlags) {
  const Result result = run_dlreset("run --help");
  EXPECT_EQ(result.status, 0);
  for (const char* flag : {"--variant", "--workers", "--epochs", "--batch-size", "--no-persistent-workers",
                           "--start-method", "--limit-train-batches", "--limit-val-batches", "--num-sanity-val-steps",
                           "--data", "--device", "--seed", "--trace-resets", "--profiler", "--json", "--no-progress"}) {
    EXPECT_THAT(result.out, HasSubstr(flag));
  }
}

TEST(Cli, VersionNamesTheProjectVersionAndLibTorch) {
  const Result result = run_dlreset("--version");
  EXPECT_EQ(result.status, 0);
  EXPECT_THAT(result.out, ::testing::MatchesRegex("dlreset " DLRESET_VERSION
                                                  " \\(built with LibTorch [0-9]+\\.[0-9]+\\.[0-9]+\\)\n"));
}

/// Every flag `--help` lists for `command` (the words that start with "--").
std::vector<std::string> flags_in_help(const std::string& command) {
  const Result help = run_dlreset(command + " --help");
  std::vector<std::string> flags;
  for (std::size_t at = help.out.find("--"); at != std::string::npos; at = help.out.find("--", at + 2)) {
    const std::size_t end = help.out.find_first_of(" ,=\n", at);
    flags.push_back(help.out.substr(at, end - at));
  }
  return flags;
}

TEST(Cli, ManPageHasEverySubcommandAndEveryFlagOfHelp) {
  const Result man = run_dlreset("--man-page");
  EXPECT_EQ(man.status, 0);
  std::string option_lines;  // the ".B" lines: an option's names, its value's type
  std::istringstream lines(man.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(".B ", 0) == 0) option_lines += line + "\n";
  }
  EXPECT_THAT(man.out, HasSubstr(".TH DLRESET 1 \"\" \"dlreset " DLRESET_VERSION "\""));
  int flags = 0;
  for (const char* command : {"run", "demo", "watch"}) {
    EXPECT_THAT(man.out, HasSubstr(std::string(".SS ") + command + "\n")) << command;
    for (std::string flag : flags_in_help(command)) {
      // roff escapes each hyphen.
      for (std::size_t at = flag.find('-'); at != std::string::npos; at = flag.find('-', at + 2)) {
        flag.replace(at, 1, "\\-");
      }
      EXPECT_THAT(option_lines, HasSubstr(flag)) << command;
      ++flags;
    }
  }
  EXPECT_GT(flags, 20) << "the help texts were read";
  EXPECT_THAT(man.out, Not(HasSubstr("man\\-page"))) << "the hidden flag stays hidden";
}

/// What the bash completion offers for each command line of `command_lines` (bash's COMP_WORDS,
/// whose last word is the one being completed; "" for a new word), one reply each. One bash
/// sources the script once and completes them all: a program start each would cost seconds.
std::vector<std::string> completions(const std::vector<std::string>& command_lines) {
  const testing::TempDir dir;
  const std::string script = dir.file("dlreset.bash");
  EXPECT_EQ(run_dlreset("--bash-completion > " + script).status, 0);
  std::string commands = "source " + script + ";";
  for (const std::string& words : command_lines) {
    commands += " COMP_WORDS=(" + words +
                "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=();"
                " _dlreset; echo \"${COMPREPLY[*]}\";";
  }
  std::istringstream out(testing::run_shell("bash -c '" + commands + "'").out);
  std::vector<std::string> replies;
  for (std::string reply; std::getline(out, reply);) replies.push_back(reply);
  return replies;
}

TEST(Cli, BashCompletionOffersSubcommandsFlagsAndValues) {
  EXPECT_THAT(completions({"dlreset \"\"", "dlreset run --vari", "dlreset run --variant \"\"", "dlreset demo --co",
                           "dlreset demo --color a", "dlreset run --workers \"\"", "dlreset --man",
                           "dlreset watch --mo", "dlreset watch --mode \"\""}),
              ::testing::ElementsAre("run demo watch -h --help --version", "--variant",
                                     "buggy fixed workaround vanilla", "--color", "auto always",
                                     "" /* a number: nothing to offer */, "" /* the hidden flags stay hidden */,
                                     "--mode", "auto connector poll"));
  const std::string script = run_dlreset("--bash-completion").out;
  for (const char* command : {"run", "demo", "watch"}) {
    for (const std::string& flag : flags_in_help(command)) {
      EXPECT_THAT(script, HasSubstr(" " + flag)) << command;
    }
  }
}

TEST(Cli, MissingDataSetExitsOneNamingTheFile) {
  const Result result = run_dlreset(std::string(kSmallRun) + " --data /nonexistent/fmnist");
  EXPECT_EQ(result.status, 1);
  EXPECT_THAT(result.err, HasSubstr("/nonexistent/fmnist/train-images-idx3-ubyte.gz"));
}

TEST(Cli, CorruptDataSetExitsOneNamingTheFile) {
  testing::TempDir dir;
  testing::write_tiny_idx_set(dir.path(), "train", 20, 28, 28);
  testing::write_tiny_idx_set(dir.path(), "t10k", 10, 28, 28);
  FILE* broken = std::fopen(dir.file("t10k-labels-idx1-ubyte.gz").c_str(), "w");
  std::fputs("not an idx file", broken);
  std::fclose(broken);
  const Result result = run_dlreset(std::string(kSmallRun) + " --data " + dir.path());
  EXPECT_EQ(result.status, 1);
  EXPECT_THAT(result.err, HasSubstr("t10k-labels-idx1-ubyte.gz"));
}

TEST(Cli, JsonToStdoutIsTheOnlyThingOnStdout) {
  const Result result = run_dlreset(std::string(kSmallRun) + " --variant buggy --json -");
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report["variant"], "buggy");
  EXPECT_EQ(report["workers"], 1);
  EXPECT_EQ(report["epochs"], 2);
  EXPECT_EQ(report["persistent_workers"], true);
  EXPECT_EQ(report["start_method"], "fork");
  EXPECT_EQ(report["device"], "cpu");
  EXPECT_EQ(report["epoch_s"].size(), 2u);
  EXPECT_EQ(report["loss_per_epoch"].size(), 2u);
  EXPECT_EQ(report["val_loss_per_epoch"].size(), 2u);
  EXPECT_EQ(report["train_samples_per_epoch"][0], 3 * 64);
  EXPECT_EQ(report["train_order_digest_per_epoch"][0].get<std::string>().size(), 16u);
  EXPECT_EQ(report["train"]["worker_spawns"], 2);
  EXPECT_EQ(report["train"]["iterator_resets_during_fit"], 1);
  EXPECT_EQ(report["train"]["iterator_resets_total"], 2);
  EXPECT_EQ(report["val"]["worker_spawns"], 3);
  EXPECT_EQ(report["val"]["dataset_loads"], 3);
  EXPECT_EQ(report["reset_events"].size(), 5u);
  EXPECT_EQ(report["reset_events"][0]["phase"], "fit");
  EXPECT_EQ(report["reset_events"][0]["frames"].size(), 0u) << "no frames without tracing";
}

TEST(Cli, TraceResetsPrintsATracebackAndFillsTheFrames) {
  const Result result = run_dlreset(std::string(kSmallRun) + " --variant buggy --trace-resets --json -");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(result.err, HasSubstr("Traceback (most recent call last)"));
  EXPECT_THAT(result.err, HasSubstr("File \"repro/fetching.cpp\", line "));
  EXPECT_THAT(result.err, HasSubstr("in repro::DataFetcher::reset"));
  const nlohmann::json report = nlohmann::json::parse(result.out);
  const nlohmann::json& frames = report["reset_events"][0]["frames"];
  ASSERT_FALSE(frames.empty());
  EXPECT_THAT(frames[0].get<std::string>(), HasSubstr("shutdown_workers_and_reset_iterator"));
}

TEST(Cli, SummaryShowsSpawnsAndResetsPerLoader) {
  const Result result = run_dlreset(std::string(kSmallRun) + " --variant fixed --profiler");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("worker spawns"));
  EXPECT_THAT(result.out, HasSubstr("Profiler Report"));
  EXPECT_THAT(result.out, HasSubstr("run_training_epoch"));
  EXPECT_THAT(result.out, HasSubstr("get_train_batch"));
  EXPECT_THAT(result.err, Not(HasSubstr("Traceback")));
}

/// --seed-mode torch gives real torch's sample order: each new iterator draws its seed from the
/// loader's generator, which moves the shuffle on, so 1.5.0's respawns make its order drift from
/// 1.5.1's from the second epoch on. With stable seeds the orders stay equal. Counted by epoch:
/// the first epoch's order is the same in both modes.
TEST(Cli, SeedModeTorchShowsTheBuggyOrderDriftingFromTheFixedOne) {
  std::map<std::string, nlohmann::json> digests;
  for (const std::string mode : {"stable", "torch"}) {
    for (const std::string variant : {"buggy", "fixed"}) {
      const Result result = run_dlreset("run --epochs 3 --workers 1 --limit-train-batches 3 --limit-val-batches 2 "
                                        "--no-progress --variant " +
                                        variant + " --seed-mode " + mode + " --json -");
      ASSERT_EQ(result.status, 0) << result.err;
      const nlohmann::json report = nlohmann::json::parse(result.out);
      EXPECT_EQ(report["seed_mode"], mode);
      digests[mode + " " + variant] = report["train_order_digest_per_epoch"];
    }
  }
  EXPECT_EQ(digests["stable buggy"], digests["stable fixed"]);
  int differing = 0;
  for (std::size_t epoch = 0; epoch < 3; ++epoch) {
    const bool same = digests["torch buggy"][epoch] == digests["torch fixed"][epoch];
    EXPECT_EQ(same, epoch == 0) << "epoch " << epoch;
    differing += !same;
  }
  EXPECT_EQ(differing, 2);
}

TEST(Cli, SpawnWorkersRunTheBinaryInWorkerMode) {
  const Result result = run_dlreset(std::string(kSmallRun) + " --start-method spawn --json -");
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report["train"]["worker_spawns"], 1);
  EXPECT_EQ(report["train"]["dataset_loads"], 1);
}

}  // namespace
}  // namespace dlreset::app
