// Mirrors _env_rendezvous_handler of torch/distributed/rendezvous.py @ v1.13.1.
#include "harness/distributed/rendezvous.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace dlreset::distributed {

namespace {

[[noreturn]] void fail(const std::string& what) { throw DistError("env:// rendezvous: " + what); }

/// A whole decimal integer in [low, high], or DistError naming the variable and its value.
int parse_int(const char* name, const char* text, long low, long high) {
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || value < low || value > high) {
    fail(std::string("environment variable ") + name + "='" + text + "' is not an integer from " + std::to_string(low) +
         " to " + std::to_string(high) + "; set it to one.");
  }
  return static_cast<int>(value);
}

}  // namespace

std::optional<Rendezvous> env_rendezvous(const GetEnv& getenv) {
  const char* rank = getenv("RANK");
  const char* world_size = getenv("WORLD_SIZE");
  const auto set = [](const char* value) { return value != nullptr && *value != '\0'; };
  if (!set(rank) && !set(world_size)) return std::nullopt;
  const auto required = [&](const char* name) {
    const char* value = getenv(name);
    if (!set(value)) {
      fail(std::string("environment variable ") + name +
           " expected, but not set; a launcher sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT "
           "together, so set them all, or none for a single process.");
    }
    return value;
  };
  Rendezvous rendezvous;
  rendezvous.world_size = parse_int("WORLD_SIZE", required("WORLD_SIZE"), 1, INT_MAX);
  rendezvous.rank = parse_int("RANK", required("RANK"), 0, INT_MAX);
  rendezvous.master_addr = required("MASTER_ADDR");
  rendezvous.master_port = parse_int("MASTER_PORT", required("MASTER_PORT"), 1, 65535);
  const char* local_rank = getenv("LOCAL_RANK");
  rendezvous.local_rank = set(local_rank) ? parse_int("LOCAL_RANK", local_rank, 0, INT_MAX) : rendezvous.rank;
  check_rendezvous(rendezvous);
  return rendezvous;
}

void check_rendezvous(const Rendezvous& rendezvous) {
  if (rendezvous.world_size < 1) {
    throw DistError("The job needs at least 1 rank, but its world size is " + std::to_string(rendezvous.world_size) +
                    "; give the number of ranks.");
  }
  if (rendezvous.rank < 0 || rendezvous.rank >= rendezvous.world_size) {
    throw DistError("Rank " + std::to_string(rendezvous.rank) + " is not in a job of " +
                    std::to_string(rendezvous.world_size) + " ranks (0 to " +
                    std::to_string(rendezvous.world_size - 1) +
                    "); give every rank the same WORLD_SIZE and each its own RANK below it.");
  }
  // Port 0 lets rank 0's store take any free port, which only its own launcher can pass on.
  if (rendezvous.master_port < 0 || rendezvous.master_port > 65535 ||
      (rendezvous.master_port == 0 && rendezvous.rank != 0)) {
    throw DistError("MASTER_PORT " + std::to_string(rendezvous.master_port) + " is not a TCP port rank " +
                    std::to_string(rendezvous.rank) + " can join; give one from 1 to 65535.");
  }
  if (rendezvous.timeout < std::chrono::seconds(kMinTimeoutS)) {
    throw DistError("The distributed timeout must be at least " + std::to_string(kMinTimeoutS) + " s, but is " +
                    std::to_string(rendezvous.timeout.count()) +
                    " ms: c10d's store counts it in whole seconds and gives up at once below one; give " +
                    std::to_string(kMinTimeoutS) + " or more.");
  }
}

}  // namespace dlreset::distributed
