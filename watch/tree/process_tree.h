// The watched process tree: who is in it, and each member's record, kept up to date from fork,
// exec and exit reports, from whichever source gives them (the events connector or /proc).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/sys/proc_stat.h"
#include "harness/sys/unique_fd.h"
#include "watch/tree/memory_sampler.h"
#include "watch/tree/process_record.h"
#include "watch/tree/resource_sampler.h"

namespace dlreset::watch {

class ProcessTree {
 public:
  /// With `exit_fds`, every live member gets a pidfd that turns readable when it exits: how the
  /// poll mode learns of exits at once instead of finding them on its next look.
  /// `memory_interval_s`: how often each member's memory is sampled (memory_sampler.h); 0: never.
  explicit ProcessTree(bool exit_fds, double memory_interval_s = 0.0);

  /// The process the tree grows from. `launched`: the watcher started it (fork and exec), so it
  /// counts as exec'd; otherwise it was attached to and its start is read from /proc.
  void add_root(pid_t pid, double now_s, bool launched);
  pid_t root() const { return root_; }

  bool is_live_member(pid_t pid) const { return live_.count(pid) != 0; }
  /// The live members, in pid order.
  std::vector<pid_t> live_members() const;
  /// The newest record of `pid`; null where it was never a member.
  const ProcessRecord* record_of(pid_t pid) const;
  /// The CPU time every member used, the ended ones included, as last read.
  double cpu_total_s() const;

  /// `parent` forked `child` at `time_s`; ignored unless `parent` is a live member.
  void on_fork(pid_t parent, pid_t child, double time_s);
  /// A member ran exec: its command line is read again.
  void on_exec(pid_t pid, double time_s);
  /// A member exited (became a zombie, or was reaped). Its CPU time is read one last time while
  /// its /proc entry still answers.
  void on_exit(pid_t pid, double time_s, std::optional<int> wait_status);
  /// A process found in /proc whose parent is a live member (poll mode). `not_before_s` is a
  /// time it cannot have started before (the previous look), which sharpens the start that
  /// /proc gives in clock ticks.
  void on_discovered(pid_t pid, const sys::ProcStat& stat, double not_before_s);

  /// Reads every live member's CPU time and resources (resource_sampler.h), and its memory where
  /// a tick of the memory interval is due (memory_sampler.h); notices the forks that ran exec
  /// since the last look (then reads their command line).
  void sample(double now_s);
  /// Every memory sample taken, handed over once the watch ends.
  MemoryRecord take_memory() { return memory_.take(); }
  /// Walks all of /proc: adds the live members' descendants the tree does not know, and ends
  /// the members that are gone. `at_attach`: the descendants found were running before the
  /// watch began (otherwise events were lost, and they are late finds).
  void rescan(double now_s, bool at_attach);

  /// Live members and their pidfds (with `exit_fds`; -1 where none could be opened).
  std::vector<std::pair<pid_t, int>> exit_fds() const;
  /// Counts every change of the tree (a process added, run exec, ended): equal counts, the
  /// same tree.
  std::uint64_t changes() const { return changes_; }

  /// Every process seen, in the order it was first seen.
  std::vector<ProcessRecord> records() const;

 private:
  /// A live member's descriptors, closed when it leaves live_: -1 where one could not be opened.
  struct Member {
    sys::UniqueFd stat_fd;
    sys::UniqueFd pid_fd;
    sys::UniqueFd statm_fd;
    sys::UniqueFd smaps_fd;       ///< /proc/PID/smaps_rollup, opened at its first memory sample.
    bool memory_read = false;     ///< Its memory was read: it had its first sample.
    std::string oom_file;         ///< Its memory cgroup's OOM-kill count (memory_cgroup_oom_file()).
    bool oom_file_known = false;  ///< oom_file was looked for since its fork or its last exec.
  };
  ProcessRecord& add(pid_t pid, pid_t parent, double start_s);

  bool use_exit_fds_;
  pid_t root_ = 0;
  /// Every record, in the order first seen; a reused pid closes the old record and adds one.
  std::vector<ProcessRecord> records_;
  std::map<pid_t, std::size_t> index_;  ///< pid -> its newest record in records_.
  std::map<pid_t, Member> live_;
  ResourceSampler resources_;
  MemorySampler memory_;
  std::uint64_t changes_ = 0;
};

}  // namespace dlreset::watch
