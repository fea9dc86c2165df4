#include "watch/tree/launch.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "harness/sys/child_process.h"
#include "watch/tree/watch_error.h"

namespace dlreset::watch {

namespace {

/// A line longer than this is searched for the epoch pattern in pieces of this size: a program
/// that prints megabytes without a newline must not grow the watcher without bound.
constexpr std::size_t kMaxLineBytes = 1 << 20;

/// Reads of one stream per wake-up: 1 MiB at 64 KiB a read; the rest waits for the next one.
constexpr int kMaxPumpReads = 16;

}  // namespace

int Passthrough::pump(const std::regex& pattern) {
  int matched = 0;
  std::array<char, 65536> buffer{};
  for (int reads = 0; reads < kMaxPumpReads; ++reads) {
    const ssize_t n = ::read(read_fd_.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;  // EAGAIN: all read for now
    if (n == 0) {      // every writer closed it
      matched += end_line(pattern, '\n');
      read_fd_.reset();
      break;
    }
    write_through(buffer.data(), static_cast<std::size_t>(n));
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[static_cast<std::size_t>(i)];
      if (c == '\n' || c == '\r') {
        matched += end_line(pattern, c);
        continue;
      }
      if (partial_.size() >= kMaxLineBytes) matched += end_line(pattern, '\n');
      partial_ += c;
    }
  }
  // A progress bar writes "\rEpoch 3:   0%|" and ends that line only at its next redraw,
  // after the epoch's first batch: a line not ended yet is read now, so that it is dated
  // when it was written.
  matched += look_at_partial(pattern);
  return matched;
}

int Passthrough::end_line(const std::regex& pattern, char end) {
  const bool redraw = after_carriage_return_ || end == '\r';
  after_carriage_return_ = end == '\r';
  const int counted = partial_counted_ ? 0 : count_line(pattern, redraw);
  partial_.clear();
  partial_counted_ = false;
  if (!redraw) last_redraw_match_.clear();
  return counted;
}

int Passthrough::look_at_partial(const std::regex& pattern) {
  if (partial_counted_ || partial_.empty()) return 0;
  const int counted = count_line(pattern, after_carriage_return_);
  partial_counted_ = counted > 0;
  return counted;
}

int Passthrough::count_line(const std::regex& pattern, bool redraw) {
  std::smatch match;
  if (partial_.empty() || !std::regex_search(partial_, match, pattern)) return 0;
  if (!redraw) return 1;
  if (match.str() == last_redraw_match_) return 0;
  last_redraw_match_ = match.str();
  return 1;
}

void Passthrough::write_through(const char* data, std::size_t size) {
  while (size > 0 && write_to_ >= 0) {
    const ssize_t n = ::write(write_to_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      write_to_ = -1;  // our own stream is gone (EPIPE): keep reading, so the program is not blocked
      break;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

pid_t launch(const std::vector<std::string>& command, const sigset_t& program_mask, bool set_unbuffered,
             const std::vector<std::string>& extra_environment, int out_fd, int err_fd) {
  // Between fork and exec only async-signal-safe calls: argv and the environment are built here.
  std::vector<std::string> arguments = command;
  std::vector<std::string> overrides = extra_environment;
  // With the output read for epoch lines, Python would buffer it in blocks, not lines, and
  // every epoch line would arrive late.
  if (set_unbuffered && std::getenv("PYTHONUNBUFFERED") == nullptr) overrides.emplace_back("PYTHONUNBUFFERED=1");
  std::vector<std::string> environment = sys::environment_with(overrides);
  const std::vector<char*> argv = sys::exec_pointers(arguments);
  const std::vector<char*> envp = sys::exec_pointers(environment);

  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    throw WatchError(std::string("cannot create a pipe: ") + std::strerror(errno) + ".", 1);
  }
  const pid_t watcher = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(status_pipe[0]);
    ::close(status_pipe[1]);
    throw WatchError(std::string("cannot fork to run '") + command[0] + "': " + std::strerror(error) + ".", 1);
  }
  if (pid == 0) {
    // The program must not outlive the watcher that reports on it.
    if (!sys::die_with_parent(SIGTERM, watcher)) ::_exit(128 + SIGTERM);
    if (out_fd >= 0) ::dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0) ::dup2(err_fd, STDERR_FILENO);
    ::signal(SIGPIPE, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &program_mask, nullptr);
    ::execvpe(argv[0], argv.data(), envp.data());
    const int error = errno;
    [[maybe_unused]] const ssize_t written = ::write(status_pipe[1], &error, sizeof error);
    ::_exit(error == ENOENT ? 127 : 126);
  }
  ::close(status_pipe[1]);
  int error = 0;
  ssize_t got = 0;
  do {
    got = ::read(status_pipe[0], &error, sizeof error);
  } while (got < 0 && errno == EINTR);
  ::close(status_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof error)) {
    ::waitpid(pid, nullptr, 0);
    if (error == ENOENT) {
      throw WatchError("cannot run '" + command[0] + "': no such command (it is neither a path nor on PATH).", 127);
    }
    throw WatchError("cannot run '" + command[0] + "': " + std::strerror(error) + ".", 126);
  }
  return pid;
}

}  // namespace dlreset::watch
