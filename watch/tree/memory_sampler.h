// Reads each live member's /proc/PID/smaps_rollup at the memory interval and keeps every tick: the
// evidence behind the worker_memory and copy_on_read checks. One read walks the process's page
// tables, and costs more the more memory the process holds, so it runs once a second by default,
// not at the 50 ms tick that reads CPU time, and less often where the reads would take more than
// 0.4% of a core (docs/results.md, "Watcher overhead", gives their cost).
#pragma once

#include <sys/types.h>

#include <utility>

#include "watch/tree/memory_use.h"

namespace dlreset::watch {

class MemorySampler {
 public:
  /// `interval_s`: how often a tick is due; 0 turns sampling off.
  explicit MemorySampler(double interval_s);

  /// Starts a tick at `now_s`, and says whether a whole one is due (every member is read), or
  /// not (only the young members' first reads: a fork worker's memory before it read anything).
  bool begin_tick(double now_s);
  /// Reads one member through `smaps_fd`, its open /proc/PID/smaps_rollup (-1: not read).
  void sample_member(pid_t pid, int smaps_fd);
  /// Ends the tick, and schedules the next one an interval later, or later still where this tick's
  /// reads took more than 0.4% of a core over the interval; a tick that read no member is not kept.
  void end_tick();
  /// Every tick kept, handed over once the watch ends.
  MemoryRecord take() { return std::move(record_); }

 private:
  MemoryRecord record_;
  double next_s_ = 0.0;
  double tick_cpu_s_ = 0.0;  ///< The CPU time this tick's reads took so far.
  MemoryTick tick_;
};

}  // namespace dlreset::watch
