// What the watcher needs to run the program it watches: the program's output on its way through
// the watcher (read for epoch lines), and the launch itself.
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <regex>
#include <string>
#include <vector>

#include "harness/sys/unique_fd.h"

namespace dlreset::watch {

/// The program's stdout or stderr on its way through the watcher: passed on unchanged, and read
/// line by line for the epoch pattern. A line ends at '\n' or at '\r': a progress bar (tqdm's,
/// Lightning's) redraws its line after a carriage return, so its redraws are lines too, and they
/// count once for each new text the pattern matches in them ("Epoch 3" drawn 50 times is one
/// epoch line).
class Passthrough {
 public:
  Passthrough(int read_fd, int write_to) : read_fd_(read_fd), write_to_(write_to) {}
  int fd() const { return read_fd_.get(); }
  bool open() const { return read_fd_.get() >= 0; }

  /// Reads what is there, up to kMaxPumpReads reads, so that a program that never stops writing
  /// cannot keep the watcher from its other work; returns the number of epoch lines found.
  int pump(const std::regex& pattern);

 private:
  /// The line in `partial_` ended with `end`: whether it is an epoch line not counted yet.
  int end_line(const std::regex& pattern, char end);
  /// The line not ended yet, as far as it goes: counted once if it is an epoch line already.
  int look_at_partial(const std::regex& pattern);
  int count_line(const std::regex& pattern, bool redraw);
  void write_through(const char* data, std::size_t size);

  sys::UniqueFd read_fd_;
  int write_to_;
  std::string partial_;
  bool after_carriage_return_ = false;  ///< The last line ended with '\r': the next is a redraw too.
  bool partial_counted_ = false;        ///< The line not ended yet was counted already.
  std::string last_redraw_match_;       ///< What the pattern matched in the last counted redraw.
};

/// Starts `command` as the watched program: its exec failure comes back over a close-on-exec
/// pipe, so a missing command is an error here, not an exit status to guess from.
pid_t launch(const std::vector<std::string>& command, const sigset_t& program_mask, bool set_unbuffered,
             const std::vector<std::string>& extra_environment, int out_fd, int err_fd);

}  // namespace dlreset::watch
