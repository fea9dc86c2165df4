#include "watch/tree/proc_poller.h"

#include <fcntl.h>

#include <optional>

#include "harness/sys/clock.h"
#include "harness/sys/proc_stat.h"

namespace dlreset::watch {

namespace {

/// New pids read one by one at most per look; past this a single walk of /proc costs less. A
/// walk costs some 300 µs on a machine with a hundred processes, one pid some 10 µs.
constexpr pid_t kMaxPidsPerLook = 32;

}  // namespace

ProcPoller::ProcPoller() : loadavg_fd_(::open("/proc/loadavg", O_RDONLY | O_CLOEXEC)) {
  if (const std::optional<pid_t> last = sys::read_last_created_pid(loadavg_fd_.get())) last_pid_ = *last;
  last_look_s_ = sys::monotonic_s();
}

int ProcPoller::look(ProcessTree& tree, double now_s) {
  const double previous_look_s = last_look_s_;
  last_look_s_ = now_s;
  const std::optional<pid_t> newest = sys::read_last_created_pid(loadavg_fd_.get());
  if (!newest) {
    tree.rescan(now_s, false);
    return -1;
  }
  if (*newest == last_pid_) return 0;
  const pid_t first = last_pid_ + 1;
  last_pid_ = *newest;
  if (*newest < first || *newest - first >= kMaxPidsPerLook) {
    tree.rescan(now_s, false);
    return -1;
  }
  int read = 0;
  // Ascending, so a parent created in this interval is in the tree before its children.
  for (pid_t pid = first; pid <= *newest; ++pid) {
    const std::optional<sys::ProcStat> stat = sys::read_proc_stat_of(pid);
    ++read;
    if (!stat || stat->state == 'Z' || !tree.is_live_member(stat->parent)) continue;
    // The id may be a thread's: a thread names its process's parent as its own, and that
    // parent may be a member. Only a thread-group leader is a process.
    const std::optional<pid_t> group = sys::read_thread_group(pid);
    if (!group || *group != pid) continue;
    tree.on_discovered(pid, *stat, previous_look_s);
  }
  return read;
}

}  // namespace dlreset::watch
