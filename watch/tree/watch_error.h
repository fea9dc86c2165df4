// A watch that could not start, with the exit status the command line ends with: thrown by the
// loop (watcher.cpp) and by the launch of the command (launch.cpp), which sits below the loop.
#pragma once

#include <stdexcept>
#include <string>

namespace dlreset::watch {

/// A watch that could not start: no such process, a command that cannot run, a mode that is
/// not available. `exit_status` is the one the command line should end with (2, 126 or 127).
class WatchError : public std::runtime_error {
 public:
  WatchError(const std::string& message, int exit_status) : std::runtime_error(message), exit_status_(exit_status) {}
  int exit_status() const { return exit_status_; }

 private:
  int exit_status_;
};

}  // namespace dlreset::watch
