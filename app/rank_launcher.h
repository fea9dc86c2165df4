// Starts the other ranks of a one-machine job, as torchrun does: rank 0 is this process.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace dlreset::app {

struct RankLauncherOptions {
  int world_size = 2;
  std::string master_addr = "127.0.0.1";
  /// The port rank 0's store already listens on: the ranks are started once it does, so a port
  /// chosen by the kernel (--master-port 0) reaches them.
  int master_port = 29500;
  /// What every rank runs: this program's own command line. A rank tells itself from rank 0 by
  /// the RANK it finds in its environment.
  std::vector<std::string> argv;
  /// How long a rank told to stop (SIGTERM) may take to shut its own workers down before
  /// SIGKILL.
  std::chrono::milliseconds stop_grace{std::chrono::seconds(10)};
};

/// Set in the environment of the ranks a RankLauncher starts: rank 0's pid, so that a rank
/// whose parent is gone can say that rank 0 ended.
inline constexpr const char* kRankZeroPidVariable = "DLRESET_RANK0_PID";

/// Ranks 1 … world_size−1 as child processes of rank 0, each the same program with RANK,
/// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT set (and
/// kRankZeroPidVariable). Each gets SIGHUP when rank 0 dies (PR_SET_PDEATHSIG, set from rank 0's
/// main thread, which lives as long as the process), which it handles by stopping as it does for
/// SIGTERM, so no rank outlives the job however rank 0 ends; the destructor stops and reaps those
/// still running. Not SIGTERM: the kernel sends the death signal again each time a dying rank 0's
/// thread hands its children on to the next, and a second SIGTERM kills at once, silently.
inline constexpr int kRankZeroDeathSignal = SIGHUP;
class RankLauncher {
 public:
  /// Starts the ranks. Throws std::runtime_error when one cannot be started.
  explicit RankLauncher(RankLauncherOptions options);
  /// SIGTERM to every rank still running, SIGKILL after `stop_grace`, then reaps them all.
  ~RankLauncher();
  RankLauncher(const RankLauncher&) = delete;
  RankLauncher& operator=(const RankLauncher&) = delete;

  /// Waits up to `timeout` for every rank to end; returns one sentence for each rank that ended
  /// badly (a non-zero status or a signal), in rank order. A rank still running at the deadline
  /// is reported as such.
  std::vector<std::string> wait(std::chrono::milliseconds timeout);
  /// The ranks that have already ended badly, waiting up to `grace` for one to end: what rank 0
  /// says when a collective fails, to name the rank that died.
  std::vector<std::string> failed_ranks(std::chrono::milliseconds grace);

  /// The ranks' process ids, rank 1 first.
  std::vector<pid_t> pids() const;

 private:
  struct Rank {
    int rank = 0;
    pid_t pid = -1;
    bool reaped = false;
    int status = 0;
  };
  /// Reaps every rank that has ended, without blocking; true when none is left running.
  bool reap_ended();
  /// reap_ended() until none is left running or `deadline`; true when none is.
  bool reap_until(std::chrono::steady_clock::time_point deadline);
  static std::string describe(const Rank& rank);

  RankLauncherOptions options_;
  std::vector<Rank> ranks_;
};

}  // namespace dlreset::app
