#include "watch/tree/stack_dump.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "harness/sys/child_process.h"
#include "harness/sys/clock.h"
#include "harness/sys/unique_fd.h"

namespace dlreset::watch {

namespace {

/// How often the stacks file is looked at, and how long it must stay the same size to be whole.
constexpr double kLookS = 0.01;
constexpr double kSettledS = 0.15;

off_t file_size(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 ? status.st_size : 0;
}

std::string read_from(const std::string& path, off_t offset) {
  const sys::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  std::string text;
  if (fd.get() < 0) return text;
  char buffer[8192];
  for (;;) {
    const ssize_t got = ::pread(fd.get(), buffer, sizeof buffer, offset);
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    offset += got;
  }
  return text;
}

/// "20 s", "7.5 s".
std::string seconds_text(double seconds) { return fmt::format("{:g} s", std::round(seconds * 10.0) / 10.0); }

/// A process the collection did not reach before its deadline.
ProcessStacks not_reached(pid_t pid, const StackRequest& request) {
  ProcessStacks stacks;
  stacks.pid = pid;
  stacks.why_none = "the tree's stacks were read for " + seconds_text(request.total_s) +
                    ", the most a hang waits for them, before this process was reached";
  return stacks;
}

void sleep_s(double seconds) {
  const struct timespec pause { 0, static_cast<long>(seconds * 1e9) };
  ::nanosleep(&pause, nullptr);
}

/// Signals `pid` and waits up to `wait_s` for what its faulthandler writes; "" where it wrote
/// nothing in time.
std::string python_stacks(pid_t pid, const StackRequest& request, double wait_s) {
  const off_t before = file_size(request.stacks_file);
  if (::kill(pid, request.signal) != 0) return "";
  const double start_s = sys::monotonic_s();
  off_t size = before;
  double changed_s = start_s;
  for (;;) {
    sleep_s(kLookS);
    const double now_s = sys::monotonic_s();
    const off_t now_size = file_size(request.stacks_file);
    if (now_size != size) {
      size = now_size;
      changed_s = now_s;
    } else if (size > before && now_s - changed_s >= kSettledS) {
      break;
    }
    if (size == before && now_s - start_s >= wait_s) return "";
  }
  return read_from(request.stacks_file, before);
}

/// Runs `argv` (argv[0] a path) with its stdout and stderr read into the result, for at most
/// `timeout_s`; "" where it could not run.
std::string run_tool(std::vector<std::string> argv, double timeout_s, std::string& why) {
  int out[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0) {
    why = std::string("cannot create a pipe: ") + std::strerror(errno);
    return "";
  }
  sys::UniqueFd read_end(out[0]);
  const std::vector<char*> pointers = sys::exec_pointers(argv);
  const pid_t child = ::fork();
  if (child < 0) {
    why = std::string("cannot fork: ") + std::strerror(errno);
    ::close(out[1]);
    return "";
  }
  if (child == 0) {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(out[1], STDERR_FILENO);
    ::execv(pointers[0], pointers.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  const double deadline_s = sys::monotonic_s() + timeout_s;
  char buffer[8192];
  bool timed_out = false;
  for (;;) {
    const double left_s = deadline_s - sys::monotonic_s();
    if (left_s <= 0) {
      timed_out = true;
      break;
    }
    pollfd entry{read_end.get(), POLLIN, 0};
    if (::poll(&entry, 1, static_cast<int>(left_s * 1000.0) + 1) < 0 && errno != EINTR) break;
    const ssize_t got = ::read(read_end.get(), buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0 && errno != EINTR && errno != EAGAIN) break;
    if (got > 0) text.append(buffer, static_cast<std::size_t>(got));
  }
  if (timed_out) ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (timed_out) why = "it took more than " + seconds_text(timeout_s);
  return text;
}

ProcessStacks native_stacks(pid_t pid, const std::string& tool, double timeout_s) {
  ProcessStacks stacks;
  stacks.pid = pid;
  if (tool.empty()) {
    stacks.why_none = "neither eu-stack (Debian's elfutils) nor gdb is installed";
    return stacks;
  }
  const std::string name = tool.substr(tool.rfind('/') + 1);
  const std::string target = std::to_string(pid);
  std::vector<std::string> argv = {tool, "-p", target};
  if (name == "gdb") argv = {tool, "-p", target, "-batch", "-nx", "-q", "-ex", "thread apply all bt"};
  std::string why;
  stacks.text = run_tool(argv, timeout_s, why);
  if (stacks.text.find("#0") == std::string::npos) {
    stacks.why_none = name + " read no stack" + (why.empty() ? "" : " (" + why + ")") +
                      (stacks.text.empty() ? "" : ": " + stacks.text.substr(0, stacks.text.find('\n')));
    stacks.text.clear();
    return stacks;
  }
  stacks.source = name;
  return stacks;
}

}  // namespace

std::string native_stack_tool() {
  const char* path = std::getenv("PATH");
  for (const char* name : {"eu-stack", "gdb"}) {
    std::string folders = path != nullptr ? path : "/usr/bin:/bin";
    std::size_t start = 0;
    while (start <= folders.size()) {
      const std::size_t end = std::min(folders.find(':', start), folders.size());
      std::string candidate = folders.substr(start, end - start) + "/" + name;
      if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
      start = end + 1;
    }
  }
  return "";
}

std::vector<ProcessStacks> collect_stacks(const StackRequest& request) {
  const double deadline_s = sys::monotonic_s() + request.total_s;
  std::vector<ProcessStacks> all;
  std::vector<pid_t> native = request.native;
  for (const pid_t pid : request.python) {
    const double left_s = deadline_s - sys::monotonic_s();
    if (left_s <= 0) {
      all.push_back(not_reached(pid, request));
      continue;
    }
    ProcessStacks stacks;
    stacks.pid = pid;
    stacks.text = python_stacks(pid, request, std::min(request.python_wait_s, left_s));
    if (stacks.text.empty()) {
      native.push_back(pid);  // a process that did not answer: its native stacks, below
      continue;
    }
    stacks.source = "python";
    all.push_back(std::move(stacks));
  }
  const std::string tool = native.empty() ? "" : native_stack_tool();
  for (const pid_t pid : native) {
    const double left_s = deadline_s - sys::monotonic_s();
    all.push_back(left_s <= 0 ? not_reached(pid, request)
                              : native_stacks(pid, tool, std::min(request.native_timeout_s, left_s)));
  }
  return all;
}

}  // namespace dlreset::watch
