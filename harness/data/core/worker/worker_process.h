// One worker's child process as the main process holds it: its pid, its pidfd, and how it ended.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>

#include "harness/sys/unique_fd.h"

namespace dlreset::data::detail {

/// The lifecycle of a fork or spawn worker's process, apart from what it sends: a pidfd that
/// fires when it exits (even while a process it started holds its socket open), the wait for
/// its exit, the kill of one that does not go, and its wait status for the report.
class WorkerProcess {
 public:
  WorkerProcess() = default;
  /// Holds `pid`, with a pidfd where the kernel gives one (Linux 5.3; not under valgrind 3.19).
  /// The pidfd is the main process's alone: no worker forked later keeps it.
  explicit WorkerProcess(pid_t pid);
  ~WorkerProcess();
  WorkerProcess(WorkerProcess&&) noexcept = default;
  WorkerProcess& operator=(WorkerProcess&& other) noexcept;
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  pid_t pid() const { return pid_; }
  /// -1 without one, or once closed.
  int pidfd() const { return pidfd_.get(); }
  /// Its pidfd fired: the process is gone, and everything it sent is in its socket.
  bool exited() const { return exited_; }
  void mark_exited() { exited_ = true; }
  bool reaped() const { return reaped_; }
  /// waitpid's status, once reaped.
  int wait_status() const { return wait_status_; }

  /// Waits up to `timeout` for the process to exit (then kills it if `kill_after`), and reaps
  /// it; true when this call reaped it. Once it is reaped, or was to be killed, its pidfd is
  /// closed, `forget_pidfd` called with it first (to take it out of a wait set): even unreaped
  /// (the program reaped it itself: ECHILD), since a pidfd left open would stay on the
  /// parent-only list, and its number, once reused for a file of the program's, would be closed
  /// in every later fork worker.
  bool reap(std::chrono::milliseconds timeout, bool kill_after, const std::function<void(int)>& forget_pidfd);

 private:
  pid_t pid_ = -1;
  /// Off the parent-only list before it closes: its number may be reused at once.
  void close_pidfd();

  sys::UniqueFd pidfd_;
  bool exited_ = false;
  bool reaped_ = false;
  int wait_status_ = 0;
};

}  // namespace dlreset::data::detail
