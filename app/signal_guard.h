// How `dlreset run` answers SIGINT and SIGTERM: shut the workers down, then exit 128 + signal.
#pragma once

#include <signal.h>

namespace dlreset::app {

/// While alive, SIGINT and SIGTERM do not kill the program: their handler only records the
/// signal with data::request_interrupt (one async-signal-safe store). The DataLoader notices
/// within data::kInterruptCheckInterval, between batches or inside a wait for workers, and
/// throws data::InterruptedError; unwinding it destroys the iterators, whose destructors shut
/// the workers down (exit message, grace period, SIGKILL for stragglers, waitpid). The command
/// then exits with 128 + the signal number (130 for SIGINT, 143 for SIGTERM), as a shell
/// reports a program killed by that signal.
///
/// Each handler is installed with SA_RESETHAND: a second SIGINT or SIGTERM, while the first is
/// being handled, takes the default action and ends the program at once. Its workers then die
/// through PR_SET_PDEATHSIG, which every worker process sets: the backstop for every way the
/// main process can die, SIGKILL included.
class SignalGuard {
 public:
  SignalGuard();
  /// Restores the previous dispositions; a signal that arrived stays recorded.
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

/// 128 + signal: the exit status of a command that stopped because of that signal.
inline int exit_status_for_signal(int signal_number) { return 128 + signal_number; }

}  // namespace dlreset::app
