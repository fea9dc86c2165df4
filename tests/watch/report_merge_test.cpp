// The merge of a multi-node job's reports, from small hand-written reports: counts summed over
// the nodes, the job's input wait from the ranks' sums, a straggler found across nodes, a rank
// two nodes both claim, a file that is no report, and a gate that a node could not see.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/fixtures.h"
#include "watch/analysis/checks/checks.h"
#include "watch/cli/merge_command.h"
#include "watch/report/report_merge.h"

namespace dlreset::watch {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

/// A rank's entry of input_wait.ranks.
nlohmann::json rank_wait(int pid, int rank, double wait_s, double step_s) {
  return {{"pid", pid}, {"rank", rank}, {"totals", {{"wait_s", wait_s}, {"step_s", step_s}, {"passes", 3}}}};
}

/// A node's report: `respawns` respawns, its ranks' waits, every check seen.
nlohmann::json node_report(long respawns, const std::vector<nlohmann::json>& ranks, const std::string& host) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckSpec& spec : watch::checks()) {
    nlohmann::json check = {
        {"name", spec.flags.name}, {"count", 0}, {"seen", true}, {"details", nlohmann::json::array()}};
    if (spec.flags.limit != GateLimit::count) check["measure"] = 0.0;
    checks.push_back(check);
  }
  checks[0]["count"] = respawns;  // the table's first row: respawns
  nlohmann::json processes = nlohmann::json::array();
  for (const auto& rank : ranks)
    processes.push_back({{"pid", rank["pid"]}, {"rank", rank["rank"]}, {"hook_loaded", true}});
  return {{"schema", "dlreset.watch"},
          {"schema_version", 3},
          {"host", host},
          {"command", {"python3", "-m", "torch.distributed.run"}},
          {"exit_status", 0},
          {"checks", checks},
          {"python", {{"hook", "on"}, {"processes", processes}}},
          {"input_wait", {{"ranks", ranks}}}};
}

MergedReport merge(const std::vector<nlohmann::json>& reports) {
  std::vector<std::pair<std::string, nlohmann::json>> named;
  for (std::size_t i = 0; i < reports.size(); ++i) named.emplace_back("node" + std::to_string(i) + ".json", reports[i]);
  return merge_reports(named);
}

/// What merge_command said of `options`: its exit status and its stderr (its summary on stdout
/// is left out).
struct MergeOutcome {
  int status = -1;
  std::string err;
};

MergeOutcome run_merge(const MergeCommandOptions& options) {
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  MergeOutcome outcome;
  outcome.status = merge_command(options);
  ::testing::internal::GetCapturedStdout();
  outcome.err = ::testing::internal::GetCapturedStderr();
  return outcome;
}

MergeCommandOptions gate(const std::string& name, double limit) {
  MergeCommandOptions options;
  for (Gate& entry : options.gates) {
    if (name == entry.check->flags.name) entry.limit = limit;
  }
  return options;
}

TEST(ReportMerge, SumsEachChecksCountOverTheNodes) {
  const MergedReport merged =
      merge({node_report(2, {rank_wait(10, 0, 1.0, 9.0)}, "a"), node_report(3, {rank_wait(20, 1, 1.0, 9.0)}, "b")});
  ASSERT_EQ(merged.nodes.size(), 2u);
  EXPECT_EQ(merged.check("respawns").count, 5);
  EXPECT_EQ(merged.check("respawns").counts, (std::vector<long>{2, 3}));
  EXPECT_EQ(merged.nodes[0].ranks, (std::vector<int>{0}));
  EXPECT_EQ(merged.nodes[1].ranks, (std::vector<int>{1}));
  EXPECT_EQ(merged.duplicates.size(), 0u);
  const std::string summary = merged_summary(merged);
  EXPECT_THAT(summary, HasSubstr("2 nodes, 2 ranks\n"));
  EXPECT_THAT(summary, HasSubstr("  node 2 (node1.json, host b): rank 1: python3 -m torch.distributed.run\n"));
  EXPECT_THAT(summary, HasSubstr("  respawns: 5 (2 + 3)\n"));
}

TEST(ReportMerge, TheJobsInputWaitComesFromTheRanksSumsNotFromTheirFractions) {
  // Node 0: 1 of 2 s waited (50%); node 1: 1 of 10 s (10%). The job: 2 of 12 s, 17%, where the
  // average of the fractions would say 30%.
  const MergedReport merged =
      merge({node_report(0, {rank_wait(10, 0, 1.0, 1.0)}, "a"), node_report(0, {rank_wait(20, 1, 1.0, 9.0)}, "b")});
  EXPECT_DOUBLE_EQ(merged.job.wait_s, 2.0);
  EXPECT_DOUBLE_EQ(merged.job.step_s, 10.0);
  ASSERT_TRUE(merged.check("input_wait").measure.has_value());
  EXPECT_DOUBLE_EQ(*merged.check("input_wait").measure, 2.0 / 12.0);
  EXPECT_EQ(merged.job.passes, 6);
  const nlohmann::json json = merged_json(merged);
  EXPECT_DOUBLE_EQ(json["input_wait"]["job"]["fraction"].get<double>(), 2.0 / 12.0);
  EXPECT_EQ(json["input_wait"]["ranks"].size(), 2u);
}

TEST(ReportMerge, ARankThatWaitedFarMoreThanTheOthersOnAnotherNodeIsAStraggler) {
  const MergedReport merged = merge({node_report(0, {rank_wait(10, 0, 0.5, 9.5), rank_wait(11, 1, 0.6, 9.4)}, "a"),
                                     node_report(0, {rank_wait(20, 2, 4.0, 6.0), rank_wait(21, 3, 0.5, 9.5)}, "b")});
  EXPECT_EQ(merged.straggler,
            "rank 2 (pid 20) waited 40% of its time, the other ranks 5-6%: rank 2 (pid 20) is an input straggler");
  EXPECT_THAT(merged_summary(merged), HasSubstr("  rank 2 (pid 20) on node 2 waited 40% of its time for data"));
  // No rank stands out on either node alone.
  EXPECT_EQ(merge({node_report(0, {rank_wait(10, 0, 0.5, 9.5), rank_wait(11, 1, 0.6, 9.4)}, "a")}).straggler, "");
}

TEST(ReportMerge, ARankTwoNodesBothReportIsSaidNotOverwritten) {
  const MergedReport merged =
      merge({node_report(0, {rank_wait(10, 0, 1.0, 9.0)}, "a"), node_report(0, {rank_wait(20, 0, 1.0, 9.0)}, "b")});
  ASSERT_EQ(merged.duplicates.size(), 1u);
  EXPECT_EQ(merged.duplicates[0].rank, 0);
  EXPECT_EQ(merged.duplicates[0].nodes, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(merged.ranks.size(), 2u);
  EXPECT_THAT(merged_summary(merged),
              HasSubstr("rank 0 is reported by node 1 (node0.json, host a) and node 2 (node1.json, host b): the job is "
                        "misconfigured"));
  EXPECT_EQ(merged_json(merged)["duplicate_ranks"].size(), 1u);
}

TEST(ReportMerge, AGateANodeCouldNotSeeFailsAndNamesTheNode) {
  nlohmann::json blind = node_report(0, {}, "b");
  for (auto& check : blind["checks"]) {
    if (check["name"] == "input_wait") {
      check["seen"] = false;
      check["measure"] = nullptr;
      check["unseen_why"] = "the hook measured no pass of a DataLoader";
    }
  }
  const MergedReport merged = merge({node_report(0, {rank_wait(10, 0, 1.0, 9.0)}, "a"), blind});
  std::ostringstream out;
  bool failed = false;
  const nlohmann::json gates = hold_merged_gates(gate("input_wait", 0.5), merged, out, failed);
  EXPECT_EQ(failed, true);
  ASSERT_EQ(gates.size(), 1u);
  EXPECT_EQ(gates[0]["seen"], false);
  EXPECT_EQ(
      out.str(),
      "dlreset-watch merge: --max-input-wait cannot be checked: node 2 (node1.json, host b) could not see it: the "
      "hook measured no pass of a DataLoader.\n");
}

TEST(ReportMerge, ACountedGateHoldsTheJobsSumAndNamesEachNodesShare) {
  const MergedReport merged =
      merge({node_report(1, {rank_wait(10, 0, 1.0, 9.0)}, "a"), node_report(2, {rank_wait(20, 1, 1.0, 9.0)}, "b")});
  std::ostringstream out;
  bool failed = false;
  hold_merged_gates(gate("respawns", 2), merged, out, failed);
  EXPECT_EQ(out.str(),
            "dlreset-watch merge: respawns counted 3 over the job's 2 nodes (node 1: 1, node 2: 2), more than the 2 "
            "allowed (--max-respawns).\n");
  std::ostringstream held;
  bool held_failed = false;
  hold_merged_gates(gate("respawns", 3), merged, held, held_failed);
  EXPECT_EQ(held.str(), "");
  EXPECT_EQ(held_failed, false);
}

TEST(ReportMerge, AFileThatIsNoReportOfThisSchemaIsRefusedWithStatus2) {
  testing::TempDir dir;
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.file(name)) << text;
    return dir.file(name);
  };
  const std::string good = write("good.json", node_report(0, {}, "a").dump());
  nlohmann::json old = node_report(0, {}, "a");
  old["schema_version"] = 2;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {write("text.json", "not json"), "is not JSON"},
      {write("other.json", R"({"schema": "dlreset.run"})"), "is not a dlreset watch report"},
      {write("old.json", old.dump()), "is a dlreset watch report of schema version 2, and the merge reads version 3"},
      {dir.file("missing.json"), "cannot be read"}};
  for (const auto& [path, words] : bad) {
    MergeCommandOptions options;
    options.reports = {good, path};
    const auto [status, err] = run_merge(options);
    EXPECT_EQ(status, 2) << path;
    EXPECT_THAT(err, StartsWith("dlreset-watch merge: " + path + " " + words)) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

TEST(ReportMerge, AProgramThatFailedOnANodeGivesTheMergeItsStatus) {
  testing::TempDir dir;
  nlohmann::json failed = node_report(0, {}, "b");
  failed["exit_status"] = 3;
  std::ofstream(dir.file("node0.json")) << node_report(0, {}, "a").dump();
  std::ofstream(dir.file("node1.json")) << failed.dump();
  MergeCommandOptions options = gate("respawns", 0);
  options.reports = {dir.file("node0.json"), dir.file("node1.json")};
  const auto [status, err] = run_merge(options);
  EXPECT_EQ(status, 3) << err;
  EXPECT_THAT(err, HasSubstr("the program failed on node 2 (" + dir.file("node1.json") + ", host b) (status 3)"));
}

TEST(ReportMerge, AMergeWithoutReportsIsAUsageError) {
  std::vector<std::string> words = {"merge", "--max-respawns", "0"};
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  ::testing::internal::CaptureStderr();
  const int status = merge_main(static_cast<int>(argv.size()), argv.data(), "dlreset-watch merge");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 2) << err;
  EXPECT_THAT(err, StartsWith("dlreset-watch merge needs the reports to merge"));
}

}  // namespace
}  // namespace dlreset::watch
