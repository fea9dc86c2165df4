#include "watch/tree/process_tree.h"

#include <fcntl.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>

#include "harness/sys/pidfd.h"
#include "harness/sys/proc_stat.h"
#include "watch/hook/hook_channel.h"

namespace dlreset::watch {

namespace {

/// A member that runs a Python interpreter: what it started with, read while it is young.
void note_python(ProcessRecord& record) {
  const std::string first_word = record.cmdline.substr(0, record.cmdline.find(' '));
  if (!is_python_program(record.comm) && !is_python_program(first_word)) return;
  PythonStart start;
  if (const std::optional<std::string> raw = sys::read_file_of(record.pid, "cmdline"))
    start.argv = sys::split_cmdline(*raw);
  if (const std::optional<std::vector<std::string>> environ = sys::read_environ(record.pid)) {
    start.environ_read = true;
    for (const std::string& entry : *environ) {
      if (entry.compare(0, 11, "PYTHONPATH=") == 0) start.pythonpath = entry.substr(11);
      if (entry.compare(0, std::strlen(kHookSocketVariable) + 1, std::string(kHookSocketVariable) + "=") == 0) {
        start.socket_set = true;
      }
    }
  }
  record.python = std::move(start);
}

/// "/proc/812/statm".
std::string proc_file(pid_t pid, const char* name) { return "/proc/" + std::to_string(pid) + "/" + name; }

}  // namespace

ProcessTree::ProcessTree(bool exit_fds, double memory_interval_s)
    : use_exit_fds_(exit_fds), memory_(memory_interval_s) {}

ProcessRecord& ProcessTree::add(pid_t pid, pid_t parent, double start_s) {
  ++changes_;
  live_.erase(pid);  // a reused pid: the old process's descriptors close
  ProcessRecord record;
  record.pid = pid;
  record.parent = parent;
  record.start_s = start_s;
  records_.push_back(record);
  index_[pid] = records_.size() - 1;
  Member& member = live_[pid];
  member.stat_fd.reset(sys::open_proc_stat(pid));
  if (use_exit_fds_) member.pid_fd.reset(sys::open_pidfd(pid));
  member.statm_fd.reset(::open(proc_file(pid, "statm").c_str(), O_RDONLY | O_CLOEXEC));
  return records_.back();
}

void ProcessTree::add_root(pid_t pid, double now_s, bool launched) {
  root_ = pid;
  const std::optional<sys::ProcStat> stat = sys::read_proc_stat_of(pid);
  ProcessRecord& record = add(pid, stat ? stat->parent : 0, launched || !stat ? now_s : stat->start_s);
  record.role = ProcessRole::root;
  record.exec_seen = launched;
  record.existed_at_attach = !launched;
  record.cmdline = sys::read_cmdline(pid);
  if (stat) {
    record.comm = stat->comm;
    record.cpu_s = stat->cpu_s;
  }
  note_python(record);
}

void ProcessTree::on_fork(pid_t parent, pid_t child, double time_s) {
  if (!is_live_member(parent) || is_live_member(child)) return;
  const std::string parent_cmdline = records_[index_.at(parent)].cmdline;
  const std::string parent_comm = records_[index_.at(parent)].comm;
  ProcessRecord& record = add(child, parent, time_s);
  // A fork is a copy of its parent until it runs exec, which the connector reports.
  record.cmdline = parent_cmdline;
  record.comm = parent_comm;
}

void ProcessTree::on_exec(pid_t pid, double time_s) {
  if (!is_live_member(pid)) return;
  ProcessRecord& record = records_[index_.at(pid)];
  ++changes_;
  record.exec_seen = true;
  record.exec_s = time_s;
  // A program may move itself into a cgroup before its exec (`echo $$ > cgroup.procs; exec ...`).
  live_.at(pid).oom_file_known = false;
  if (std::string cmdline = sys::read_cmdline(pid); !cmdline.empty()) record.cmdline = cmdline;
  if (const std::optional<sys::ProcStat> stat = sys::read_proc_stat(live_.at(pid).stat_fd.get())) {
    record.comm = stat->comm;
  }
  note_python(record);
}

void ProcessTree::on_exit(pid_t pid, double time_s, std::optional<int> wait_status) {
  if (!is_live_member(pid)) return;
  ProcessRecord& record = records_[index_.at(pid)];
  if (const std::optional<sys::ProcStat> stat = sys::read_proc_stat(live_.at(pid).stat_fd.get())) {
    record.cpu_s = std::max(record.cpu_s, stat->cpu_s);
  }
  record.end_s = time_s;
  if (wait_status) record.wait_status = wait_status;
  // The OOM-kill counts are read again only for a death by a signal: a job of many short
  // processes (a shell's, a compiler's) must not pay two reads an exit.
  const bool signalled = wait_status && WIFSIGNALED(*wait_status);
  record.evidence = resources_.at_exit(pid, signalled ? live_.at(pid).oom_file : "", signalled);
  live_.erase(pid);
  ++changes_;
}

void ProcessTree::on_discovered(pid_t pid, const sys::ProcStat& stat, double not_before_s) {
  if (!is_live_member(stat.parent) || is_live_member(pid)) return;
  const ProcessRecord& parent = records_[index_.at(stat.parent)];
  const std::string parent_cmdline = parent.cmdline;
  ProcessRecord& record = add(pid, stat.parent, std::max(stat.start_s, not_before_s));
  record.comm = stat.comm;
  record.cpu_s = stat.cpu_s;
  record.cmdline = sys::read_cmdline(pid);
  // No exec event in this mode; the kernel's flag tells.
  record.exec_seen = !stat.forked_without_exec;
  if (record.cmdline.empty()) record.cmdline = parent_cmdline;
  if (record.exec_seen) note_python(record);
}

void ProcessTree::sample(double now_s) {
  std::vector<pid_t> gone;
  resources_.begin_tick(now_s);
  const bool memory_whole = memory_.begin_tick(now_s);
  for (auto& [pid, member] : live_) {
    ProcessRecord& record = records_[index_.at(pid)];
    const std::optional<sys::ProcStat> stat = sys::read_proc_stat(member.stat_fd.get());
    if (stat && stat->state != 'Z') {
      // Found at its first sample: a process that ends sooner costs no read of its cgroup.
      if (!member.oom_file_known) member.oom_file = memory_cgroup_oom_file(pid);
      member.oom_file_known = true;
      resources_.sample_member(pid, member.statm_fd.get(), member.oom_file);
      // A fork that has not run exec is read at once, between whole ticks: a fork worker's first
      // sample is from before it read its data. Other members wait for the next whole tick.
      const bool first_read = !member.memory_read && stat->forked_without_exec && !record.exec_seen;
      if (memory_whole || first_read) {
        if (member.smaps_fd.get() < 0) {
          member.smaps_fd.reset(::open(proc_file(pid, "smaps_rollup").c_str(), O_RDONLY | O_CLOEXEC));
        }
        memory_.sample_member(pid, member.smaps_fd.get());
        member.memory_read = true;
      }
    }
    if (!stat || stat->state == 'Z') {
      // Without a pidfd (it exited before one could be opened, or the kernel has none), a
      // sample is where its end is found.
      if (member.pid_fd.get() < 0) gone.push_back(pid);
      if (stat) record.cpu_s = std::max(record.cpu_s, stat->cpu_s);
      continue;
    }
    record.cpu_s = std::max(record.cpu_s, stat->cpu_s);
    if (record.role == ProcessRole::root || record.exec_seen || stat->forked_without_exec) continue;
    // A fork found before its exec (polling), or whose exec event was lost: it ran one since.
    ++changes_;
    record.exec_seen = true;
    record.exec_s = now_s;
    if (std::string cmdline = sys::read_cmdline(pid); !cmdline.empty()) record.cmdline = cmdline;
    record.comm = stat->comm;
    note_python(record);
  }
  resources_.end_tick();
  memory_.end_tick();
  for (const pid_t pid : gone) on_exit(pid, now_s, std::nullopt);
}

void ProcessTree::rescan(double now_s, bool at_attach) {
  std::map<pid_t, sys::ProcStat> all;
  for (const pid_t pid : sys::list_process_ids()) {
    if (std::optional<sys::ProcStat> stat = sys::read_proc_stat_of(pid)) all[pid] = *stat;
  }
  // Members that are gone ended at some time before now; now is the best that can be said.
  std::vector<pid_t> gone;
  for (const auto& [pid, member] : live_) {
    const auto found = all.find(pid);
    if (found == all.end() || found->second.state == 'Z' ||
        found->second.start_s > records_[index_.at(pid)].start_s + 0.5) {
      gone.push_back(pid);
    }
  }
  for (const pid_t pid : gone) on_exit(pid, now_s, std::nullopt);
  // Children before grandchildren: repeat until no new descendant turns up.
  for (bool added = true; added;) {
    added = false;
    for (const auto& [pid, stat] : all) {
      if (stat.state == 'Z' || is_live_member(pid) || !is_live_member(stat.parent)) continue;
      on_discovered(pid, stat, 0.0);
      records_[index_.at(pid)].existed_at_attach = at_attach;
      added = true;
    }
  }
}

std::vector<std::pair<pid_t, int>> ProcessTree::exit_fds() const {
  std::vector<std::pair<pid_t, int>> fds;
  for (const auto& [pid, member] : live_) fds.emplace_back(pid, member.pid_fd.get());
  return fds;
}

std::vector<ProcessRecord> ProcessTree::records() const { return records_; }

std::vector<pid_t> ProcessTree::live_members() const {
  std::vector<pid_t> pids;
  for (const auto& entry : live_) pids.push_back(entry.first);
  return pids;
}

const ProcessRecord* ProcessTree::record_of(pid_t pid) const {
  const auto found = index_.find(pid);
  return found == index_.end() ? nullptr : &records_[found->second];
}

double ProcessTree::cpu_total_s() const {
  double total = 0.0;
  for (const ProcessRecord& record : records_) total += record.cpu_s;
  return total;
}

}  // namespace dlreset::watch
