// A real program under the watcher, as the watch suites run one: how dlreset-watch ended, what it
// printed, and the report it wrote.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/command.h"
#include "tests/support/python_torch.h"
#include "tests/watch/watch_json.h"

namespace dlreset::watch {

/// A watched program: how the watcher ended and what it printed, and its report (an empty object
/// where it wrote none).
struct Watched {
  testing::CommandResult result;
  nlohmann::json report;
  /// The watch wrote its report and the program itself exited 0.
  bool program_succeeded() const { return !report.empty() && report["exit_status"] == 0; }
};

/// `python3 SOURCE/tests/watch/PROGRAM`: a program of the watch suites, with its arguments.
inline std::string watch_test_program(const std::string& program) {
  return std::string(testing::kPython) + " " + source_dir() + "/tests/watch/" + program;
}

/// Runs `dlreset-watch --json JSON FLAGS -- COMMAND` and reads the report it wrote to `json`.
inline Watched watch_command(const std::string& json, const std::string& flags, const std::string& command) {
  Watched watched;
  watched.result = testing::run_shell(testing::watch_binary() + " --json " + json + " " + flags + " -- " + command);
  watched.report = read_json(json);
  return watched;
}

}  // namespace dlreset::watch
