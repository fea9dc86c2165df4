// The watch loop's signals: SIGINT, SIGTERM and SIGHUP read from a signalfd while it runs.
#pragma once

#include <signal.h>
#include <sys/signalfd.h>

#include "harness/sys/unique_fd.h"

namespace dlreset::watch {

/// SIGINT, SIGTERM and SIGHUP blocked and read from a signalfd, so the loop decides what they
/// mean, and SIGPIPE ignored, while in scope; the program gets the mask the watcher had, and
/// the default SIGPIPE.
class LoopSignals {
 public:
  LoopSignals() {
    sigemptyset(&watched_);
    for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&watched_, signal_number);
    ::sigprocmask(SIG_BLOCK, &watched_, &previous_mask_);
    struct sigaction ignore_pipe {};
    ignore_pipe.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore_pipe, &previous_pipe_);
    fd_.reset(::signalfd(-1, &watched_, SFD_CLOEXEC | SFD_NONBLOCK));
  }
  ~LoopSignals() {
    ::sigaction(SIGPIPE, &previous_pipe_, nullptr);
    // Signals that came in the last moment stay pending and act when unblocked; none is lost.
    ::sigprocmask(SIG_SETMASK, &previous_mask_, nullptr);
  }
  LoopSignals(const LoopSignals&) = delete;
  LoopSignals& operator=(const LoopSignals&) = delete;

  int fd() const { return fd_.get(); }
  /// The mask the watcher had, which the program it runs gets.
  const sigset_t& previous_mask() const { return previous_mask_; }

 private:
  sigset_t watched_{};
  sigset_t previous_mask_{};
  struct sigaction previous_pipe_ {};
  sys::UniqueFd fd_;
};

}  // namespace dlreset::watch
