// A command started in the background, its output going to files: for tests that signal or kill
// a running `dlreset run` and watch what it leaves behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/elapsed.h"
#include "tests/support/fixtures.h"

namespace dlreset::testing {

class RunningCommand {
 public:
  /// Starts `args` (args[0] is the program's path) with this process's environment plus
  /// `environment` ("NAME=value"). pid() is -1 when it could not be started.
  explicit RunningCommand(const std::vector<std::string>& args, const std::vector<std::string>& environment = {});
  /// SIGKILLs and reaps the command if it is still running.
  ~RunningCommand();
  RunningCommand(const RunningCommand&) = delete;
  RunningCommand& operator=(const RunningCommand&) = delete;

  pid_t pid() const { return pid_; }
  std::string out() const;
  std::string err() const;

  /// Waits up to `deadline_s` until the command has started training: "dlreset run:" is on its
  /// stdout and it has at least `children` child processes.
  bool wait_until_training(std::size_t children, double deadline_s) const;

  /// Waits up to `timeout_s` for the command to exit; its wait status, or nullopt.
  std::optional<int> wait_for_exit(double timeout_s);

 private:
  std::string out_path() const { return dir_.file("stdout"); }
  std::string err_path() const { return dir_.file("stderr"); }

  TempDir dir_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

}  // namespace dlreset::testing
