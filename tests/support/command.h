// Runs a command line the way a user's shell would, capturing what it prints.
#pragma once

#include <string>

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

}  // namespace dlreset::testing
