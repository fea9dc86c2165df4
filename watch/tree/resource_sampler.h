// The resources a death by a signal may have run out of, sampled at the watcher's sample tick:
// each live member's resident memory, `/dev/shm` once per mount namespace, and the kernel's
// OOM-kill counts (the system's and each memory cgroup's), kept so that an exit can be told by
// what was last seen before it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "watch/tree/death_evidence.h"

namespace dlreset::watch {

/// The file that counts the OOM kills of `pid`'s memory cgroup: v1's `memory.oom_control`, or
/// v2's `memory.events`, under /sys/fs/cgroup; "" where neither can be read.
std::string memory_cgroup_oom_file(pid_t pid);

/// The `oom_kill` count in a file of "name value" lines (/proc/vmstat, memory.events,
/// memory.oom_control); -1 where it has none.
long parse_oom_kill(const std::string& text);

class ResourceSampler {
 public:
  /// Starts a sample tick at `now_s`.
  void begin_tick(double now_s);
  /// Samples one live member: its resident memory through its open /proc/PID/statm (`statm_fd`),
  /// and its mount namespace's `/dev/shm` where no other member of that namespace was sampled
  /// this tick. `oom_file`: its cgroup's OOM-kill count, read once a tick at end_tick().
  void sample_member(pid_t pid, int statm_fd, const std::string& oom_file);
  /// Ends the tick: the tree's memory, and each OOM-kill count once (kept with each member sampled).
  void end_tick();
  /// What was last seen of `pid` before its end, reported now; with `read_oom`, the OOM-kill
  /// counts are read again. Forgets it.
  DeathEvidence at_exit(pid_t pid, const std::string& oom_file, bool read_oom = true);
  /// How many times `/dev/shm` was read (statvfs): once a mount namespace a tick.
  long shm_reads() const { return shm_reads_; }

 private:
  struct MemberSample {
    std::uint64_t rss_bytes = 0;
    std::pair<dev_t, ino_t> mount_ns{0, 0};
    double time_s = 0.0;
    std::string oom_file;
    /// The OOM-kill counts (/proc/vmstat's, then its cgroup's) at the tick before its last whole
    /// sample: a process the OOM killer picked reads as empty while the kernel reaps it, and
    /// may end ticks later; the count before must come from before the kill (-1: not read).
    std::pair<long, long> oom_before{-1, -1};
    std::pair<long, long> oom_at_sample{-1, -1};
  };
  /// One OOM-kill count: its value at the last tick and at the one before (-1: not read).
  struct Counter {
    long last = -1;
    long previous = -1;
  };
  OomCount count_now(const std::string& file, long sampled_before);

  double tick_s_ = 0.0;
  std::map<pid_t, MemberSample> members_;
  std::map<std::pair<dev_t, ino_t>, ShmUse> shm_;  ///< The last sample of each mount namespace.
  std::set<std::pair<dev_t, ino_t>> shm_this_tick_;
  std::map<std::string, Counter> counters_;  ///< By file; "/proc/vmstat" always.
  std::set<std::string> files_this_tick_;
  std::set<pid_t> whole_this_tick_;   ///< The members whose memory read as more than 0 this tick.
  std::uint64_t tree_rss_bytes_ = 0;  ///< The last whole tick's sum.
  std::uint64_t tick_rss_bytes_ = 0;  ///< This tick's, as it is summed.
  bool ticked_ = false;
  long shm_reads_ = 0;
};

}  // namespace dlreset::watch
