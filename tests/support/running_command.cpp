#include "tests/support/running_command.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "harness/sys/child_process.h"
#include "tests/support/process_census.h"

namespace dlreset::testing {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

RunningCommand::RunningCommand(const std::vector<std::string>& args, const std::vector<std::string>& environment) {
  std::vector<std::string> arguments = args;
  std::vector<std::string> variables = sys::environment_with(environment);
  const std::vector<char*> argv = sys::exec_pointers(arguments);
  const std::vector<char*> envp = sys::exec_pointers(variables);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int error = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) pid_ = -1;
}

RunningCommand::~RunningCommand() {
  if (pid_ > 0 && !exited_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::string RunningCommand::out() const { return read_file(out_path()); }
std::string RunningCommand::err() const { return read_file(err_path()); }

bool RunningCommand::wait_until_training(std::size_t children, double deadline_s) const {
  const auto start = std::chrono::steady_clock::now();
  while (seconds_since(start) < deadline_s) {
    if (out().find("dlreset run:") != std::string::npos && child_pids(pid_).size() >= children) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::optional<int> RunningCommand::wait_for_exit(double timeout_s) {
  const auto start = std::chrono::steady_clock::now();
  while (seconds_since(start) < timeout_s) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

}  // namespace dlreset::testing
