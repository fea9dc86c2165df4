// The oracle for DistributedSampler: every rank's shard, epoch by epoch, from the real torch 1.13
// sampler (tests/oracle/distributed_shards.py) and from dlreset's, over a grid of dataset sizes,
// replicas, seeds, shuffle and drop_last. They must be equal, index for index.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness/data/distributed_sampler.h"
#include "tests/support/command.h"
#include "tests/support/python_torch.h"

namespace dlreset::data {
namespace {

using nlohmann::json;

/// Sizes that divide evenly, leave a tail, and are smaller than the replicas.
json cases() {
  json all = json::array();
  for (const std::int64_t size : {2, 10, 37, 64}) {
    for (const std::int64_t replicas : {1, 2, 3, 8}) {
      for (const bool shuffle : {true, false}) {
        for (const bool drop_last : {false, true}) {
          const std::uint64_t seed = size == 37 ? 7 : 0;
          json c;
          c["name"] = "n" + std::to_string(size) + "_r" + std::to_string(replicas) +
                      (shuffle ? "_shuffle" : "_ordered") + (drop_last ? "_drop_last" : "_padded");
          c["size"] = size;
          c["num_replicas"] = replicas;
          c["shuffle"] = shuffle;
          c["seed"] = seed;
          c["drop_last"] = drop_last;
          c["epochs"] = {0, 1, 2, 5};
          all.push_back(c);
        }
      }
    }
  }
  return all;
}

TEST(DistributedSamplerOracle, EveryShardOfEveryEpochIsTorchs) {
  DLRESET_REQUIRE_ORACLE();
  const std::filesystem::path dir = std::filesystem::current_path() / "oracle";
  std::filesystem::create_directories(dir);
  const std::filesystem::path cases_path = dir / "distributed-cases.json";
  const std::filesystem::path shards_path = dir / "distributed-shards.json";
  const json grid = cases();
  std::ofstream(cases_path) << grid.dump();
  std::filesystem::remove(shards_path);
  const testing::CommandResult result = testing::run_shell(std::string(testing::kPython) + " " + DLRESET_SOURCE_DIR +
                                                           "/tests/oracle/distributed_shards.py --cases " +
                                                           cases_path.string() + " --out " + shards_path.string());
  ASSERT_EQ(result.status, 0) << "the real-torch side failed: " << result.err;
  std::ifstream in(shards_path);
  std::stringstream text;
  text << in.rdbuf();
  const json torch = json::parse(text.str());
  int compared = 0;
  for (const json& c : grid) {
    const std::string name = c.at("name");
    const json& theirs = torch.at(name);
    DistributedSamplerOptions options;
    options.num_replicas = c.at("num_replicas");
    options.shuffle = c.at("shuffle");
    options.seed = c.at("seed");
    options.drop_last = c.at("drop_last");
    const std::vector<std::int64_t> epochs = c.at("epochs");
    for (std::int64_t rank = 0; rank < options.num_replicas; ++rank) {
      options.rank = rank;
      DistributedSampler ours(c.at("size"), options);
      ASSERT_EQ(ours.size(), theirs.at("num_samples").get<std::int64_t>()) << name;
      ASSERT_EQ(ours.total_size(), theirs.at("total_size").get<std::int64_t>()) << name;
      for (std::size_t e = 0; e < epochs.size(); ++e) {
        ours.set_epoch(epochs[e]);
        const std::vector<std::int64_t> expected = theirs.at("shards").at(e).at(static_cast<std::size_t>(rank));
        EXPECT_EQ(ours.epoch_order(), expected) << name << ", rank " << rank << ", epoch " << epochs[e];
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 4 * (1 + 2 + 3 + 8) * 2 * 2 * 4) << "every rank of every case, at every epoch";
}

}  // namespace
}  // namespace dlreset::data
