// A real two-node torchrun job on one machine: two agents, each under its own dlreset-watch,
// meet at a c10d rendezvous; the merge of the two reports names both ranks, sums the respawns
// of both nodes and gates them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/command.h"
#include "tests/support/fixtures.h"
#include "tests/support/held_port.h"
#include "tests/support/python_torch.h"
#include "tests/watch/watch_json.h"

namespace dlreset::watch {
namespace {

using ::testing::HasSubstr;

/// Node `node` of a two-node job: its torchrun agent (one rank, 2 workers that Lightning 1.5.0's
/// reset replaces at the second of 2 epochs) under its own watcher, which writes node<N>.json;
/// the watch's status goes to status<N>.
std::string watched_agent(const testing::TempDir& dir, int node, int port) {
  const std::string n = std::to_string(node);
  return testing::watch_binary() + " --no-live --json " + dir.file("node" + n + ".json") + " -- " + testing::kPython +
         " -m torch.distributed.run --nnodes 2 --node_rank " + n +
         " --nproc_per_node 1 --rdzv_backend c10d --rdzv_endpoint 127.0.0.1:" + std::to_string(port) +
         " --rdzv_id dlreset-merge-" + std::to_string(getpid()) + " --redirects 1 --tee 1 --monitor_interval 0.2 " +
         source_dir() + "/tests/watch/ddp_loop.py --mode reset --epochs 2 >" + dir.file("out" + n) + " 2>" +
         dir.file("err" + n) + "; echo $? >" + dir.file("status" + n);
}

TEST(MultiNode, TwoNodesReportsMergeIntoOneJobWithEveryRankAndTheSummedRespawns) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  testing::TempDir dir;
  int port = 0;
  {
    // A port no other test holds now: the kernel's choice, given back for the store to bind.
    const testing::HeldPort held;
    port = held.port();
  }
  ASSERT_GT(port, 0);
  testing::run_shell("(" + watched_agent(dir, 0, port) + ") & (" + watched_agent(dir, 1, port) + ") & wait");
  const std::string logs = read_file(dir.file("err0")) + read_file(dir.file("err1"));
  EXPECT_EQ(read_file(dir.file("status0")), "0\n") << logs;
  EXPECT_EQ(read_file(dir.file("status1")), "0\n") << logs;
  const nlohmann::json node0 = read_json(dir.file("node0.json"));
  const nlohmann::json node1 = read_json(dir.file("node1.json"));
  ASSERT_FALSE(node0.empty()) << logs;
  ASSERT_FALSE(node1.empty()) << logs;
  // Each node's rank replaced its workers at the second epoch.
  EXPECT_EQ(check_counts(node0)["respawns"], 1) << logs;
  EXPECT_EQ(check_counts(node1)["respawns"], 1) << logs;
  // Each report names the machine it was made on, which the merge names its node by.
  std::array<char, 256> host{};
  ASSERT_EQ(gethostname(host.data(), host.size() - 1), 0);
  EXPECT_EQ(node0["host"], std::string(host.data())) << logs;

  const testing::CommandResult merged =
      testing::run_shell(testing::watch_binary() + " merge --max-respawns 0 --json " + dir.file("merged.json") + " " +
                         dir.file("node0.json") + " " + dir.file("node1.json"));
  EXPECT_EQ(merged.status, kGateFailed) << merged.out << merged.err;
  EXPECT_THAT(merged.out, HasSubstr("2 nodes, 2 ranks\n"));
  EXPECT_THAT(merged.out, HasSubstr("  respawns: 2 (1 + 1)\n"));
  EXPECT_THAT(merged.err, HasSubstr("dlreset-watch merge: respawns counted 2 over the job's 2 nodes (node 1: 1, node "
                                    "2: 1), more than the 0 allowed (--max-respawns).\n"));
  const nlohmann::json job = read_json(dir.file("merged.json"));
  ASSERT_FALSE(job.empty()) << merged.err;
  EXPECT_EQ(job["schema"], "dlreset.watch.merged");
  EXPECT_EQ(job["watch_exit_status"], kGateFailed);
  // Rendezvous hands out the global ranks: one a node, both of them, neither twice.
  std::multiset<int> ranks;
  for (const auto& node : job["nodes"]) {
    EXPECT_EQ(node["ranks"].size(), 1u) << merged.out;
    for (const auto& rank : node["ranks"]) ranks.insert(rank.get<int>());
  }
  EXPECT_EQ(ranks, (std::multiset<int>{0, 1})) << merged.out;
  EXPECT_EQ(job["duplicate_ranks"].size(), 0u) << merged.out;
  std::set<long> wait_nodes;
  for (const auto& rank : job["input_wait"]["ranks"]) wait_nodes.insert(rank["node"].get<long>());
  EXPECT_EQ(wait_nodes, (std::set<long>{0, 1})) << merged.out;

  // The same merge as a subcommand of dlreset, without a gate: every program succeeded.
  const testing::CommandResult plain = testing::run_shell(testing::dlreset_binary() + " watch merge " +
                                                          dir.file("node0.json") + " " + dir.file("node1.json"));
  EXPECT_EQ(plain.status, 0) << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("  respawns: 2 (1 + 1)\n"));
}

}  // namespace
}  // namespace dlreset::watch
