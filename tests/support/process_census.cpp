#include "tests/support/process_census.h"

#include <dirent.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "harness/sys/proc_stat.h"

namespace dlreset::testing {

namespace {

int count_entries(const char* dir_path) {
  DIR* dir = ::opendir(dir_path);
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count;
}

/// Calls `visit(pid, state)` for every process whose parent is `parent`.
template <typename Visit>
void for_each_child(std::int64_t parent, Visit visit) {
  for (const pid_t pid : sys::list_process_ids()) {
    const std::optional<sys::ProcStat> stat = sys::read_proc_stat_of(pid);
    if (stat && stat->parent == parent) visit(static_cast<std::int64_t>(pid), stat->state);
  }
}

}  // namespace

ProcessCensus ProcessCensus::take() {
  ProcessCensus census;
  census.open_fds = count_entries("/proc/self/fd") - 1;  // minus the one opendir holds
  census.threads = count_entries("/proc/self/task");
  for_each_child(::getpid(), [&](std::int64_t, char state) {
    if (state == 'Z') {
      ++census.zombies;
    } else {
      ++census.children;
    }
  });
  return census;
}

std::vector<std::int64_t> child_pids(std::int64_t parent) {
  std::vector<std::int64_t> pids;
  for_each_child(parent, [&](std::int64_t pid, char state) {
    if (state != 'Z') pids.push_back(pid);
  });
  return pids;
}

std::int64_t resident_set_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

bool process_exists(std::int64_t pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

namespace {

/// True while the process exists and is not a zombie.
bool process_running(std::int64_t pid) {
  const std::optional<sys::ProcStat> stat = sys::read_proc_stat_of(static_cast<pid_t>(pid));
  return stat && stat->state != 'Z';
}

/// The pids for which `still` holds after `timeout_s`, asked every `period`; fewer once it
/// fails for them.
template <typename Still>
std::vector<std::int64_t> wait_while(const std::vector<std::int64_t>& pids, double timeout_s,
                                     std::chrono::milliseconds period, Still still) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::vector<std::int64_t> left = pids;
  while (true) {
    left.erase(std::remove_if(left.begin(), left.end(), [&](std::int64_t pid) { return !still(pid); }), left.end());
    if (left.empty() || std::chrono::steady_clock::now() >= deadline) return left;
    std::this_thread::sleep_for(period);
  }
}

}  // namespace

std::vector<std::int64_t> wait_until_dead(const std::vector<std::int64_t>& pids, double timeout_s) {
  return wait_while(pids, timeout_s, std::chrono::milliseconds(5), process_running);
}

std::vector<std::int64_t> wait_until_gone(const std::vector<std::int64_t>& pids, double timeout_s) {
  return wait_while(pids, timeout_s, std::chrono::milliseconds(10), process_exists);
}

ProcessCensus wait_for_census(const ProcessCensus& baseline, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    const ProcessCensus now = ProcessCensus::take();
    const bool back = now.open_fds <= baseline.open_fds && now.threads <= baseline.threads &&
                      now.children <= baseline.children && now.zombies <= baseline.zombies;
    if (back || std::chrono::steady_clock::now() >= deadline) return now;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace dlreset::testing
