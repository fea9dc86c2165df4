// torch's env:// rendezvous: what a rank reads from its environment, and the one sentence it
// says when the job cannot be formed as asked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "harness/distributed/rendezvous.h"

namespace dlreset::distributed {
namespace {

using ::testing::HasSubstr;
using Environment = std::map<std::string, std::string>;

GetEnv from(const Environment& environment) {
  return [environment](const char* name) -> const char* {
    auto found = environment.find(name);
    return found == environment.end() ? nullptr : found->second.c_str();
  };
}

Environment job(const std::string& rank, const std::string& world_size) {
  return {{"RANK", rank}, {"WORLD_SIZE", world_size}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29511"}};
}

TEST(EnvRendezvous, NoVariablesIsASingleProcess) { EXPECT_FALSE(env_rendezvous(from({}))); }

TEST(EnvRendezvous, ReadsTheJobAsTorchrunSetsIt) {
  Environment environment = job("1", "2");
  environment["LOCAL_RANK"] = "0";
  const std::optional<Rendezvous> rendezvous = env_rendezvous(from(environment));
  ASSERT_TRUE(rendezvous);
  EXPECT_EQ(rendezvous->rank, 1);
  EXPECT_EQ(rendezvous->world_size, 2);
  EXPECT_EQ(rendezvous->local_rank, 0);
  EXPECT_EQ(rendezvous->master_addr, "127.0.0.1");
  EXPECT_EQ(rendezvous->master_port, 29511);
  EXPECT_EQ(env_rendezvous(from(job("1", "2")))->local_rank, 1) << "LOCAL_RANK defaults to the rank";
}

TEST(EnvRendezvous, AMissingVariableIsNamedInTorchsWords) {
  Environment environment = job("0", "2");
  environment.erase("MASTER_ADDR");
  EXPECT_THAT([&] { env_rendezvous(from(environment)); },
              ::testing::ThrowsMessage<DistError>(
                  HasSubstr("env:// rendezvous: environment variable MASTER_ADDR expected, but not set")));
}

TEST(EnvRendezvous, RefusesMalformedAndOutOfRangeValuesNamingThem) {
  const auto message = [](const Environment& environment) {
    try {
      env_rendezvous(from(environment));
    } catch (const DistError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(message(job("one", "2")), HasSubstr("RANK='one' is not an integer"));
  EXPECT_THAT(message(job("0", "0")), HasSubstr("WORLD_SIZE='0' is not an integer from 1"));
  EXPECT_THAT(message(job("2", "2")), HasSubstr("Rank 2 is not in a job of 2 ranks (0 to 1)"));
  EXPECT_THAT(message(job("-1", "2")), HasSubstr("RANK='-1'"));
  Environment bad_port = job("0", "2");
  bad_port["MASTER_PORT"] = "70000";
  EXPECT_THAT(message(bad_port), HasSubstr("MASTER_PORT='70000' is not an integer from 1 to 65535"));
}

TEST(CheckRendezvous, RefusesATimeoutShorterThanTheStoreCanCount) {
  Rendezvous job;
  job.timeout = std::chrono::milliseconds(900);
  try {
    check_rendezvous(job);
    FAIL() << "a 900 ms timeout was accepted";
  } catch (const DistError& e) {
    EXPECT_THAT(e.what(), HasSubstr("The distributed timeout must be at least 1 s, but is 900 ms"));
  }
  job.timeout = std::chrono::seconds(kMinTimeoutS);
  EXPECT_NO_THROW(check_rendezvous(job));
}

}  // namespace
}  // namespace dlreset::distributed
