// Reading a process's /proc entries: the fields of /proc/PID/stat that the watcher, the tests'
// process census and the benchmarks' memory sampler use, its command line and environment, and
// the list of processes.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace dlreset::sys {

/// The fields of /proc/PID/stat that dlreset uses.
struct ProcStat {
  pid_t pid = 0;
  pid_t parent = 0;
  char state = '?';  ///< 'R', 'S', 'Z' (exited, not yet reaped), ...
  /// The kernel's PF_FORKNOEXEC: forked and not (yet) exec'd. Exec clears it, so a look at the
  /// stat tells whether a fork became a program of its own.
  bool forked_without_exec = false;
  std::string comm;       ///< The name the kernel keeps (16 bytes at most); changes at exec.
  long minor_faults = 0;  ///< Page faults served without I/O (minflt): first touches of memory, copies on write.
  double cpu_s = 0.0;     ///< utime + stime, in seconds (clock-tick resolution).
  /// When the process started, in seconds on CLOCK_MONOTONIC (monotonic_s() of clock.h;
  /// clock-tick resolution: the kernel gives it in ticks since boot).
  double start_s = 0.0;
};

/// Parses the text of /proc/PID/stat; nothing when it is not such a text. The name may hold
/// spaces and parentheses, so the fields after it are found from its last ')'.
std::optional<ProcStat> parse_proc_stat(const std::string& text);

/// Reads /proc/PID/stat through `fd` (opened on it, read again from offset 0 each time, which
/// costs far less than opening it anew); nothing once the process is gone (reaped).
std::optional<ProcStat> read_proc_stat(int fd);
/// Opens /proc/PID/stat and reads it once; -1 and nothing when the process is gone.
int open_proc_stat(pid_t pid);
std::optional<ProcStat> read_proc_stat_of(pid_t pid);

/// The command line of `pid`, its arguments joined by spaces; empty when it cannot be read (the
/// process is gone, or is a zombie, whose memory is released).
std::string read_cmdline(pid_t pid);
/// The arguments of /proc/PID/cmdline, split at its NUL bytes.
std::vector<std::string> split_cmdline(const std::string& raw);

/// The raw text of /proc/PID/NAME; nothing when it cannot be read.
std::optional<std::string> read_file_of(pid_t pid, const char* name);

/// The entries ("NAME=value") of /proc/PID/environ: the environment the process was started
/// with; nothing when it cannot be read (another user's process, or gone).
std::optional<std::vector<std::string>> read_environ(pid_t pid);

/// The thread-group id of a task id, from /proc/ID/status: equal to the id for a process, the
/// process's for one of its threads; nothing when the task is gone.
std::optional<pid_t> read_thread_group(pid_t task);

/// The id of the process or thread most recently created on the system (the last field of
/// /proc/loadavg): one cheap read tells whether anything was created since the last look.
std::optional<pid_t> read_last_created_pid(int loadavg_fd);

/// Every process id under /proc (thread-group leaders only).
std::vector<pid_t> list_process_ids();

}  // namespace dlreset::sys
