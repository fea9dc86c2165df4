// The other ranks of one BM_WorkerStartup repetition, as forked copies of the benchmark.
#include "bench/support/forked_ranks.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace dlreset::bench {

namespace {

/// A close-on-exec pipe, as its read end and its write end.
std::array<sys::UniqueFd, 2> make_pipe() {
  std::array<int, 2> fds{-1, -1};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0)
    throw std::runtime_error("pipe2 failed for the forked ranks of BM_WorkerStartup");
  return {sys::UniqueFd(fds[0]), sys::UniqueFd(fds[1])};
}

}  // namespace

ForkedRanks::ForkedRanks(int count, const std::function<StartupTimes()>& start_and_stop) {
  auto go = make_pipe();
  auto times = make_pipe();
  go_read_ = std::move(go[0]);
  go_write_ = std::move(go[1]);
  times_read_ = std::move(times[0]);
  times_write_ = std::move(times[1]);
  for (int rank = 1; rank <= count; ++rank) {
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed for a rank of BM_WorkerStartup");
    if (pid == 0) run_rank(start_and_stop);
    pids_.push_back(pid);
  }
  go_read_.reset();
  times_write_.reset();
}

ForkedRanks::~ForkedRanks() {
  go_write_.reset();
  times_read_.reset();
  for (const pid_t pid : pids_) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void ForkedRanks::go() {
  const std::string word(pids_.size(), 'g');
  if (::write(go_write_.get(), word.data(), word.size()) != static_cast<ssize_t>(word.size())) {
    throw std::runtime_error("could not start the forked ranks of BM_WorkerStartup");
  }
}

std::vector<StartupTimes> ForkedRanks::times() {
  std::vector<StartupTimes> all(pids_.size());
  auto* bytes = reinterpret_cast<char*>(all.data());
  std::size_t got = 0;
  const std::size_t want = all.size() * sizeof(StartupTimes);
  while (got < want) {
    const ssize_t n = ::read(times_read_.get(), bytes + got, want - got);
    // End of file: every rank's end of the pipe is closed before all have reported.
    if (n == 0 || (n < 0 && errno != EINTR)) throw std::runtime_error("a forked rank of BM_WorkerStartup died");
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  return all;
}

void ForkedRanks::run_rank(const std::function<StartupTimes()>& start_and_stop) {
  go_write_.reset();
  times_read_.reset();
  StartupTimes times;
  char word = 0;
  if (::read(go_read_.get(), &word, 1) == 1) {
    try {
      times = start_and_stop();
    } catch (...) {
      times = StartupTimes{};
    }
  }
  [[maybe_unused]] const ssize_t written = ::write(times_write_.get(), &times, sizeof times);
  ::_exit(0);  // no destructors: the objects are the parent's copies
}

}  // namespace dlreset::bench
