// A process's memory as /proc/PID/smaps_rollup gives it, sampled at the watch's memory interval
// (--memory-interval), and every sample of a watch: what tells a worker that grows, and how much
// the workers alive together cost.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace dlreset::watch {

/// One process's memory at one sample.
struct MemoryUse {
  /// Its proportional set size: each page divided among the processes that map it, so that the
  /// workers' PSS sum to what they cost the machine, where their RSS would count shared pages
  /// again in every worker.
  std::uint64_t pss_bytes = 0;
  /// Pages written that no other process maps. A fork worker starts with almost none: every page
  /// it writes, or whose reference counts it touches, is copied and joins this.
  std::uint64_t private_dirty_bytes = 0;
  /// Pages mapped with other processes (Shared_Clean + Shared_Dirty): for a fork worker, what it
  /// still shares with its parent.
  std::uint64_t shared_bytes = 0;
};

/// The live members' memory at one tick of the memory interval, all read together, so that a
/// whole tick's sum is what the tree held at once; or, between those, the first read of members
/// that had none, taken at the first tick that saw them, so that a fork worker's growth counts
/// from before it read anything.
struct MemoryTick {
  double time_s = 0.0;  ///< CLOCK_MONOTONIC.
  bool whole = true;    ///< Every live member was read.
  std::vector<std::pair<pid_t, MemoryUse>> members;
};

/// A watch's memory samples.
struct MemoryRecord {
  double interval_s = 0.0;  ///< --memory-interval; 0: memory was not sampled.
  std::vector<MemoryTick> ticks;
  long reads = 0;           ///< smaps_rollup files read, over every tick.
  double read_cpu_s = 0.0;  ///< The watcher's CPU time those reads took: what sampling costs.
  /// Ticks whose reads took more than 0.4% of a core, so that the next one came later than the interval.
  long stretched = 0;
};

/// Pss, Private_Dirty and Shared_Clean + Shared_Dirty from the text of /proc/PID/smaps_rollup
/// (in kB there); empty where it has no Pss line (a process that ended, a kernel before 4.14).
std::optional<MemoryUse> parse_smaps_rollup(std::string_view text);

}  // namespace dlreset::watch
