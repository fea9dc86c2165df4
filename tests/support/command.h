// Runs a command line the way a user's shell would, capturing what it prints.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace dlreset::testing {

struct CommandResult {
  int status = -1;  ///< Exit status, or 128 + signal if it was killed.
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

/// Runs `command` with /bin/sh; stdout and stderr are captured separately.
CommandResult run_shell(const std::string& command);

/// The dlreset binary this build made.
std::string dlreset_binary();

/// The standalone watcher this build made, dlreset-watch: the same watcher as `dlreset watch`,
/// which starts a second sooner for not loading LibTorch. The tests that are not about the
/// subcommand watch with it (RealJobs.TheStandaloneWatcherLinksNoLibTorchAndGivesTheSameReport
/// holds the two to the same report).
std::string watch_binary();

/// A command line's arguments, and what its usage error must name (a flag, most often).
using UsageCase = std::pair<std::string, std::string>;

/// Runs `command + " " + arguments` for each case and expects a usage error: exit status 2,
/// nothing on stdout, and one line on stderr that names what the case says.
void expect_usage_errors(const std::string& command, const std::vector<UsageCase>& cases);

}  // namespace dlreset::testing
