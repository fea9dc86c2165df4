#include "harness/sys/proc_stat.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sstream>

#include "harness/sys/clock.h"

namespace dlreset::sys {

namespace {

/// Reads what an open /proc file holds, from offset 0. Files of /proc are generated afresh on
/// each read from 0, so the same descriptor serves every look.
std::optional<std::string> pread_all(int fd) {
  std::array<char, 4096> buffer{};
  std::string text;
  off_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    text.append(buffer.data(), static_cast<std::size_t>(n));
    offset += n;
    // /proc hands over a small file in one read; a short read is its end, so the usual look
    // costs one call, not two.
    if (static_cast<std::size_t>(n) < buffer.size()) break;
  }
  return text;
}

std::optional<std::string> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> text = pread_all(fd);
  ::close(fd);
  return text;
}

/// /proc gives start times in clock ticks since boot, on CLOCK_BOOTTIME; dlreset keeps
/// CLOCK_MONOTONIC, which stops while the machine sleeps. Their difference is read each time, so
/// a suspend during a watch does not skew later starts.
double boot_to_monotonic_s() { return monotonic_s() - seconds_on(CLOCK_BOOTTIME); }

double ticks_per_s() {
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return ticks;
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(const std::string& text) {
  const std::size_t open = text.find('(');
  const std::size_t close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  ProcStat stat;
  stat.pid = static_cast<pid_t>(std::strtol(text.c_str(), nullptr, 10));
  stat.comm = text.substr(open + 1, close - open - 1);
  // After the name: field 3 (state) onwards, space-separated; flags is field 9, minflt 10,
  // utime and stime 14 and 15, starttime 22 (proc(5)).
  std::istringstream rest(text.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string field; rest >> field && fields.size() < 20;) fields.push_back(field);
  if (fields.size() < 20 || fields[0].size() != 1) return std::nullopt;
  stat.state = fields[0][0];
  stat.parent = static_cast<pid_t>(std::strtol(fields[1].c_str(), nullptr, 10));
  constexpr unsigned long kForkNoExec = 0x00000040;  // PF_FORKNOEXEC, include/linux/sched.h
  stat.forked_without_exec = (std::strtoul(fields[6].c_str(), nullptr, 10) & kForkNoExec) != 0;
  stat.minor_faults = std::strtol(fields[7].c_str(), nullptr, 10);
  const double utime = std::strtod(fields[11].c_str(), nullptr);
  const double stime = std::strtod(fields[12].c_str(), nullptr);
  stat.cpu_s = (utime + stime) / ticks_per_s();
  stat.start_s = std::strtod(fields[19].c_str(), nullptr) / ticks_per_s() + boot_to_monotonic_s();
  return stat;
}

std::optional<ProcStat> read_proc_stat(int fd) {
  if (fd < 0) return std::nullopt;
  const std::optional<std::string> text = pread_all(fd);
  if (!text || text->empty()) return std::nullopt;
  return parse_proc_stat(*text);
}

int open_proc_stat(pid_t pid) {
  return ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
}

std::optional<ProcStat> read_proc_stat_of(pid_t pid) {
  const std::optional<std::string> text = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!text || text->empty()) return std::nullopt;
  return parse_proc_stat(*text);
}

std::vector<std::string> split_cmdline(const std::string& raw) {
  std::vector<std::string> args;
  std::size_t begin = 0;
  while (begin < raw.size()) {
    std::size_t end = raw.find('\0', begin);
    if (end == std::string::npos) end = raw.size();
    args.push_back(raw.substr(begin, end - begin));
    begin = end + 1;
  }
  return args;
}

std::string read_cmdline(pid_t pid) {
  const std::optional<std::string> raw = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  if (!raw) return {};
  std::string joined;
  for (const std::string& arg : split_cmdline(*raw)) {
    if (!joined.empty()) joined += ' ';
    joined += arg;
  }
  return joined;
}

std::optional<std::string> read_file_of(pid_t pid, const char* name) {
  return read_file("/proc/" + std::to_string(pid) + "/" + name);
}

std::optional<std::vector<std::string>> read_environ(pid_t pid) {
  const std::optional<std::string> raw = read_file_of(pid, "environ");
  if (!raw) return std::nullopt;
  return split_cmdline(*raw);
}

std::optional<pid_t> read_thread_group(pid_t task) {
  const std::optional<std::string> status = read_file("/proc/" + std::to_string(task) + "/status");
  if (!status) return std::nullopt;
  const std::size_t at = status->find("\nTgid:");
  if (at == std::string::npos) return std::nullopt;
  return static_cast<pid_t>(std::strtol(status->c_str() + at + 6, nullptr, 10));
}

std::optional<pid_t> read_last_created_pid(int loadavg_fd) {
  const std::optional<std::string> text = pread_all(loadavg_fd);
  if (!text) return std::nullopt;
  const std::size_t space = text->find_last_of(' ');
  if (space == std::string::npos) return std::nullopt;
  return static_cast<pid_t>(std::strtol(text->c_str() + space + 1, nullptr, 10));
}

std::vector<pid_t> list_process_ids() {
  std::vector<pid_t> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && pid > 0) pids.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return pids;
}

}  // namespace dlreset::sys
