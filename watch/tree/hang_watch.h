// The hang watchdog of `dlreset watch --hang-timeout`: tells, at each sample tick, whether the
// watched program has stopped making progress for that long. docs/watch.md, "A loader that
// hangs", defines a hang:
// - with the Python hook in a program that imported torch.utils.data: a process with a pass in
//   progress (an iterator between iter() and its end) that handed out no batch for the timeout;
// - otherwise: no CPU used by the whole tree, and no change to it, for the timeout.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "watch/hook/hook_event.h"
#include "watch/tree/stack_dump.h"

namespace dlreset::watch {

/// How the watch saw that the program was hung.
enum class HangRule {
  batches,  ///< A pass in progress handed out no batch (the hook's pass_begun and pass_beat).
  cpu,      ///< The tree used no CPU and did not change.
};

const char* to_string(HangRule rule);

/// One hang the watchdog saw: when, by which rule, and which process it names.
struct HangSign {
  double time_s = 0.0;   ///< When the watchdog called it (CLOCK_MONOTONIC).
  double quiet_s = 0.0;  ///< Since the last progress it knew of.
  HangRule rule = HangRule::cpu;
  pid_t pid = 0;         ///< The process whose pass handed out nothing (rule batches); the root for cpu.
  std::string iterator;  ///< That pass's iterator key ("I1"), and its pass number.
  long pass = 0;
  long batches = 0;  ///< The batches that pass had handed out, as its last beat said.
};

/// A hang as the watch recorded it: the sign, every live process's stacks then, and whether the
/// watcher ended the program (--on-hang stop).
struct HangRecord {
  HangSign sign;
  std::vector<ProcessStacks> stacks;
  bool stopped = false;
};

class HangWatch {
 public:
  /// `timeout_s` > 0. The hook says that a pass hands out batches once every beat_s() at most.
  explicit HangWatch(double timeout_s) : timeout_s_(timeout_s) {}

  /// How often a pass that hands out batches says so: often enough that a pass called hung has
  /// handed out nothing for at least the timeout, rarely enough to cost nothing a batch.
  double beat_s() const;

  /// A hook event: the patches are in (the batch rule holds from now on), a pass began, handed
  /// out batches or ended.
  void on_hook_event(const HookEvent& event);
  /// A member ended: its passes with it.
  void on_exit(pid_t pid);

  /// At a sample tick: the CPU time the tree has used so far (every member's, ended ones
  /// included) and its count of changes (ProcessTree::changes()). Returns a hang where one is
  /// seen that was not reported yet; a hang is reported once, until progress is seen again.
  std::optional<HangSign> look(double now_s, double tree_cpu_s, std::uint64_t changes, pid_t root);

  /// Passes in progress now, in every process.
  std::size_t live_passes() const { return passes_.size(); }

 private:
  struct LivePass {
    double progress_s = 0.0;  ///< Its begin, or its last beat.
    long batches = 0;
    bool reported = false;  ///< Called hung, and no beat since.
  };
  using PassKey = std::pair<pid_t, std::pair<std::string, long>>;  ///< pid, iterator, pass.

  double timeout_s_;
  bool batch_rule_ = false;  ///< The hook patched torch.utils.data in some process.
  std::map<PassKey, LivePass> passes_;
  double cpu_s_ = -1.0;  ///< The tree's CPU time at its last progress; -1: no look yet.
  std::uint64_t changes_ = 0;
  double cpu_progress_s_ = 0.0;  ///< When the tree last used CPU or changed.
  bool cpu_reported_ = false;    ///< The cpu rule called a hang, and the tree has not used CPU since.
};

}  // namespace dlreset::watch
