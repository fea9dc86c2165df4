// What the watcher sampled of a process's resources while it ran, kept so that a death by a
// signal can be told: what ran out (shared memory, memory) and whether the kernel killed it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlreset::watch {

/// `/dev/shm` as statvfs saw it in one mount namespace (through /proc/PID/root/dev/shm: a
/// container's `/dev/shm` is not the host's).
struct ShmUse {
  double time_s = 0.0;  ///< When it was sampled (CLOCK_MONOTONIC).
  std::uint64_t used_bytes = 0;
  std::uint64_t size_bytes = 0;
};

/// One count of the kernel's OOM kills, read before a process's end and at its end.
struct OomCount {
  std::string source;  ///< "/proc/vmstat", or the cgroup's file: ".../memory.events".
  long before = 0;     ///< At the sample before the last one before the end (or the first).
  long at_exit = 0;    ///< Read again as the end was reported.
  bool rose() const { return at_exit > before; }
};

/// The evidence the watcher holds of a process at its end, from its last sample.
struct DeathEvidence {
  std::optional<std::uint64_t> rss_bytes;       ///< Its resident memory at its last sample.
  std::optional<std::uint64_t> tree_rss_bytes;  ///< The whole tree's at that sample.
  std::optional<double> sampled_s;              ///< When that sample was taken.
  std::optional<ShmUse> shm;                    ///< Its mount namespace's `/dev/shm`, last sampled.
  std::vector<OomCount> oom;                    ///< Every OOM-kill count that could be read.
};

}  // namespace dlreset::watch
