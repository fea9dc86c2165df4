// `dlreset watch`: is a training program killing its DataLoader workers? Runs it (or attaches to
// it) under the process-tree watcher and says.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "watch/watcher.h"

namespace dlreset::app {

/// The settings of `dlreset watch`, with the defaults its --help shows.
struct WatchCommandOptions {
  std::vector<std::string> command;  ///< Run this, or
  int pid = 0;                       ///< attach to this process.
  std::string mode = "auto";         ///< auto, connector or poll.
  int poll_ms = 5;
  std::string epoch_regex;           ///< Empty: the output is not read.
  std::string json_path;
  std::string events_path;
  /// Workers may be replaced at most this often; -1: any number (the program's status decides).
  /// --expect-persistent sets 0.
  int max_respawns = -1;
  int generation_window_ms = 1000;
  bool live = true;  ///< A line on stderr at each respawn, as it is found.
};

/// Watches and prints the summary on stderr. Exit status: the program's own (128 + N for a
/// signal, 127 for a command not found, 126 for one that cannot run); 1 when workers were
/// replaced more often than allowed and the program itself succeeded; 2 for bad input.
int watch_command(const WatchCommandOptions& options);

}  // namespace dlreset::app
