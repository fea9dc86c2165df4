// Mirrors _env_rendezvous_handler of torch/distributed/rendezvous.py @ v1.13.1.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace dlreset::distributed {

/// Where a rank finds its job: what torch's env:// rendezvous reads, as torchrun sets it.
struct Rendezvous {
  int rank = 0;
  int world_size = 1;
  /// The rank's index on its own machine (torchrun's LOCAL_RANK); the rank where unset.
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  /// Bounds the wait for the other ranks to join, and every collective after.
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

/// The shortest timeout a job can have: c10d's TCPStore counts its timeout in whole seconds, and
/// a rank 0 given less cannot connect to its own store.
constexpr int kMinTimeoutS = 1;

/// A job that cannot be formed as asked: a bad rank or port, a variable missing, the port in
/// use, a rank that never came. The message is one sentence that names the value and the fix.
class DistError : public std::runtime_error {
 public:
  /// What ended the wait. A collective fails at once when a peer's socket closes, which
  /// happens while that peer is on its way out: its launcher can then wait for its exit status
  /// instead of guessing.
  enum class Cause { other, peer_closed, timed_out };

  explicit DistError(const std::string& what, Cause cause = Cause::other) : std::runtime_error(what), cause_(cause) {}

  Cause cause() const { return cause_; }

 private:
  Cause cause_;
};

/// Reads a variable of the environment; null where it is unset. Tests pass their own.
using GetEnv = std::function<const char*(const char*)>;

/// torch's env:// rendezvous: RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, and LOCAL_RANK
/// where set. nullopt when neither RANK nor WORLD_SIZE is set (a single process); DistError
/// when some are and others are missing or malformed, with torch's words ("env://
/// rendezvous: environment variable MASTER_ADDR expected, but not set") and the fix.
std::optional<Rendezvous> env_rendezvous(const GetEnv& getenv);

/// Checks a rendezvous given by flags or the environment: world_size ≥ 1, rank in
/// [0, world_size), port in 1–65535 (or 0 on rank 0: any free port), a timeout of at least
/// kMinTimeoutS.
/// Throws DistError.
void check_rendezvous(const Rendezvous& rendezvous);

}  // namespace dlreset::distributed
