#include "app/rank_launcher.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

#include "harness/sys/child_process.h"

namespace dlreset::app {

namespace {

/// This process's environment with the rendezvous variables of `rank` put in place of any
/// already there.
std::vector<std::string> rank_environment(const RankLauncherOptions& options, int rank) {
  return sys::environment_with({"RANK=" + std::to_string(rank), "LOCAL_RANK=" + std::to_string(rank),
                                "WORLD_SIZE=" + std::to_string(options.world_size),
                                "LOCAL_WORLD_SIZE=" + std::to_string(options.world_size),
                                "MASTER_ADDR=" + options.master_addr,
                                "MASTER_PORT=" + std::to_string(options.master_port),
                                std::string(kRankZeroPidVariable) + "=" + std::to_string(::getpid())});
}

}  // namespace

RankLauncher::RankLauncher(RankLauncherOptions options) : options_(std::move(options)) {
  const pid_t launcher = ::getpid();
  for (int rank = 1; rank < options_.world_size; ++rank) {
    // Everything the child needs is built before fork: between fork and exec it may only make
    // async-signal-safe calls, since rank 0 already runs threads (its store's).
    std::vector<std::string> environment = rank_environment(options_, rank);
    const std::vector<char*> envp = sys::exec_pointers(environment);
    std::vector<std::string> arguments = options_.argv;
    const std::vector<char*> argv = sys::exec_pointers(arguments);
    const pid_t pid = ::fork();
    if (pid < 0) {
      throw std::runtime_error("Could not start rank " + std::to_string(rank) + " (fork: " + std::strerror(errno) +
                               "); lower --ranks or raise the process limit.");
    }
    if (pid == 0) {
      if (!sys::die_with_parent(kRankZeroDeathSignal, launcher)) ::_exit(1);  // rank 0 died already
      ::execve("/proc/self/exe", argv.data(), envp.data());
      static const char kMessage[] = "dlreset: a rank could not run /proc/self/exe.\n";
      [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
      ::_exit(127);
    }
    ranks_.push_back(Rank{rank, pid, false, 0});
  }
}

RankLauncher::~RankLauncher() {
  if (reap_ended()) return;
  for (const Rank& rank : ranks_) {
    if (!rank.reaped) ::kill(rank.pid, SIGTERM);
  }
  reap_until(std::chrono::steady_clock::now() + options_.stop_grace);
  for (Rank& rank : ranks_) {
    if (rank.reaped) continue;
    ::kill(rank.pid, SIGKILL);
    while (::waitpid(rank.pid, &rank.status, 0) < 0 && errno == EINTR) {
    }
    rank.reaped = true;
  }
}

bool RankLauncher::reap_ended() {
  bool all = true;
  for (Rank& rank : ranks_) {
    if (rank.reaped) continue;
    const pid_t got = ::waitpid(rank.pid, &rank.status, WNOHANG);
    if (got == rank.pid || (got < 0 && errno == ECHILD)) {
      rank.reaped = true;
    } else {
      all = false;
    }
  }
  return all;
}

bool RankLauncher::reap_until(std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    if (reap_ended()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string RankLauncher::describe(const Rank& rank) {
  const std::string who = "rank " + std::to_string(rank.rank) + " (pid " + std::to_string(rank.pid) + ")";
  if (!rank.reaped) return who + " was still running";
  if (WIFSIGNALED(rank.status)) {
    const int signal_number = WTERMSIG(rank.status);
    return who + " was killed by signal " + std::to_string(signal_number) + " (" + ::strsignal(signal_number) + ")";
  }
  return who + " exited with status " + std::to_string(WEXITSTATUS(rank.status));
}

std::vector<std::string> RankLauncher::wait(std::chrono::milliseconds timeout) {
  reap_until(std::chrono::steady_clock::now() + timeout);
  std::vector<std::string> failures;
  for (const Rank& rank : ranks_) {
    const bool clean = rank.reaped && WIFEXITED(rank.status) && WEXITSTATUS(rank.status) == 0;
    if (!clean) failures.push_back(describe(rank));
  }
  return failures;
}

std::vector<std::string> RankLauncher::failed_ranks(std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  std::vector<std::string> failures;
  for (;;) {
    reap_ended();
    for (const Rank& rank : ranks_) {
      const bool bad = rank.reaped && !(WIFEXITED(rank.status) && WEXITSTATUS(rank.status) == 0);
      if (bad) failures.push_back(describe(rank));
    }
    if (!failures.empty() || std::chrono::steady_clock::now() >= deadline) return failures;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::vector<pid_t> RankLauncher::pids() const {
  std::vector<pid_t> result;
  for (const Rank& rank : ranks_) result.push_back(rank.pid);
  return result;
}

}  // namespace dlreset::app
