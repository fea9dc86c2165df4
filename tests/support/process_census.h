// Counts what a process holds, so fault tests can check that nothing leaked or was left behind.
#pragma once

#include <cstdint>
#include <vector>

namespace dlreset::testing {

/// A snapshot of this process's open descriptors, threads and child processes.
struct ProcessCensus {
  int open_fds = 0;
  int threads = 0;
  int children = 0;  ///< Live children (not zombies).
  int zombies = 0;   ///< Children that exited and were never reaped.

  static ProcessCensus take();
};

/// Pids of the live (not zombie) children of `parent`.
std::vector<std::int64_t> child_pids(std::int64_t parent);

/// This process's resident set size (VmRSS), in KiB.
std::int64_t resident_set_kib();

/// True if a process with this pid exists (alive or zombie).
bool process_exists(std::int64_t pid);

/// Waits up to `timeout_s` for every pid to have stopped running (exited, reaped or not);
/// returns those still running. An orphan's zombie is reaped by init, on init's schedule.
std::vector<std::int64_t> wait_until_dead(const std::vector<std::int64_t>& pids, double timeout_s);

/// Waits up to `timeout_s` for every pid to be gone; returns those still there.
std::vector<std::int64_t> wait_until_gone(const std::vector<std::int64_t>& pids, double timeout_s);

/// Waits up to `timeout_s` for the census to return to `baseline` (threads may take a moment to
/// disappear from /proc after being joined); returns the last census taken.
ProcessCensus wait_for_census(const ProcessCensus& baseline, double timeout_s);

}  // namespace dlreset::testing
