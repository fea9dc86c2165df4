// The other ranks of one BM_WorkerStartup repetition, as forked copies of the benchmark.
#pragma once

#include <sys/types.h>

#include <cmath>
#include <functional>
#include <vector>

#include "harness/sys/unique_fd.h"

namespace dlreset::bench {

/// When one process's workers are up, and when they are shut down again (steady clock, which
/// all processes of this machine share). NaN where a rank failed.
struct StartupTimes {
  double started_s = NAN;
  double shut_down_s = NAN;
};

/// `count` forked copies of this process, each holding its own copy of the loader, as each rank
/// of a DDP job builds its own. Each waits for the word to go, runs `start_and_stop` (which
/// starts and stops its loader's workers), and reports its times. A fork, not a new program:
/// the copies run only the data layer, as fork workers do, and the ranks of a job are processes
/// as large as this one.
class ForkedRanks {
 public:
  ForkedRanks(int count, const std::function<StartupTimes()>& start_and_stop);
  /// Ends every rank: one still waiting for the word reads end of file and leaves.
  ~ForkedRanks();
  ForkedRanks(const ForkedRanks&) = delete;
  ForkedRanks& operator=(const ForkedRanks&) = delete;
  ForkedRanks(ForkedRanks&&) = delete;
  ForkedRanks& operator=(ForkedRanks&&) = delete;

  /// Every rank at once.
  void go();
  /// Each rank's times, once all have reported. A rank that failed reports NaN.
  std::vector<StartupTimes> times();

 private:
  [[noreturn]] void run_rank(const std::function<StartupTimes()>& start_and_stop);

  sys::UniqueFd go_read_;
  sys::UniqueFd go_write_;
  sys::UniqueFd times_read_;
  sys::UniqueFd times_write_;
  std::vector<pid_t> pids_;
};

}  // namespace dlreset::bench
