#include "watch/tree/watcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/sys/clock.h"
#include "harness/sys/own_process.h"
#include "harness/sys/pidfd.h"
#include "harness/sys/proc_stat.h"
#include "harness/sys/unique_fd.h"
#include "watch/hook/hook_channel.h"
#include "watch/tree/fd_census.h"
#include "watch/tree/hang_response.h"
#include "watch/tree/launch.h"
#include "watch/tree/loop_signals.h"
#include "watch/tree/proc_connector.h"
#include "watch/tree/proc_poller.h"
#include "watch/tree/process_tree.h"

namespace dlreset::watch {

namespace {

/// The hook's stacks come on SIGRTMIN + this: a real-time signal no library of the Python stack
/// is known to use (docs/watch.md, "A loader that hangs").
constexpr int kStackSignalOffset = 11;

/// How long after the tree last changed on_sample is still called.
constexpr double kSampleFollowUpS = 1.0;

void check_attachable(pid_t pid) {
  if (pid <= 0) {
    throw WatchError("--pid " + std::to_string(pid) + " is not a process id; give the pid of a running process.", 2);
  }
  if (pid == ::getpid()) throw WatchError("--pid " + std::to_string(pid) + " is dlreset watch itself.", 2);
  if (::kill(pid, 0) != 0 && errno == ESRCH) {
    throw WatchError("--pid " + std::to_string(pid) + ": there is no such process (it may have exited already).", 2);
  }
  if (!sys::read_proc_stat_of(pid)) {
    throw WatchError("--pid " + std::to_string(pid) + ": /proc/" + std::to_string(pid) +
                         "/stat cannot be read, so the process cannot be watched (is /proc mounted?).",
                     2);
  }
  if (sys::read_cmdline(pid).empty() && ::access(("/proc/" + std::to_string(pid) + "/cmdline").c_str(), R_OK) != 0) {
    throw WatchError("--pid " + std::to_string(pid) + ": its command line cannot be read (" + std::strerror(errno) +
                         "); watch it as its owner or as root.",
                     2);
  }
}

}  // namespace

const char* to_string(WatchMode mode) {
  switch (mode) {
    case WatchMode::automatic: return "auto";
    case WatchMode::connector: return "connector";
    case WatchMode::poll: return "poll";
  }
  return "auto";
}

namespace {

/// One watch from start to end: what run_watch() does, a step a function.
class WatchLoop {
 public:
  explicit WatchLoop(const WatchOptions& options) : options_(options), attached_(options.command.empty()) {}

  WatchResult run() {
    if (attached_) check_attachable(options_.attach_pid);
    if (options_.poll_ms <= 0) {
      throw WatchError("--poll-ms " + std::to_string(options_.poll_ms) +
                           " is not a positive interval; give 1 or more (default 5).",
                       2);
    }
    result_.attached = attached_;
    result_.poll_ms = options_.poll_ms;
    open_connector();
    open_hook();
    open_hang_watch();
    tree_ = std::make_unique<ProcessTree>(/*exit_fds=*/!connector_, options_.memory_interval_s);
    const LoopSignals signals;
    // Polling starts from the newest pid before the command starts, so its first children count.
    if (!connector_) poller_ = std::make_unique<ProcPoller>();
    // The watcher's own share is counted from here: opening the connector (and its probe) is a
    // one-off cost, not overhead that grows with the watch.
    const double cpu_at_start = sys::own_usage().cpu_s;
    result_.origin_s = sys::monotonic_s();
    start(signals.previous_mask());
    look_interval_s_ = options_.poll_ms / 1000.0;
    next_look_s_ = result_.origin_s + look_interval_s_;
    next_sample_s_ = result_.origin_s + options_.sample_interval_s;
    last_change_s_ = result_.origin_s;
    changes_seen_ = tree_->changes();
    while (!root_exited_ && !stop_) {
      if (!wait_once(signals.fd())) break;
    }
    // What the program wrote last; a descendant that still holds the pipes open (a worker left
    // behind, a `sleep &`) must not keep the watcher waiting for their end.
    read_events();
    pump_streams();
    apply_events();
    read_hook();
    tree_->sample(sys::monotonic_s());
    if (hangs_) {
      hangs_->finish(*tree_);
      result_.hang_stop_s = hangs_->stop_s();
    }
    result_.end_s = sys::monotonic_s();
    if (hook_) result_.hook_malformed = hook_->malformed();
    result_.processes = tree_->records();
    result_.memory = tree_->take_memory();
    result_.watcher_cpu_s = sys::own_usage().cpu_s - cpu_at_start;
    return std::move(result_);
  }

 private:
  void open_connector() {
    if (options_.mode == WatchMode::poll) {
      result_.mode_reason = "--mode poll";
    } else {
      connector_ = ProcConnector::open(result_.mode_reason);
      if (!connector_ && options_.mode == WatchMode::connector) {
        throw WatchError("the process events connector cannot be used here: " + result_.mode_reason +
                             "; use --mode poll (or auto).",
                         2);
      }
    }
    result_.mode = connector_ ? WatchMode::connector : WatchMode::poll;
    if (connector_) result_.mode_reason.clear();
  }

  /// The Python hook: a socket for its events, and the environment that loads it.
  void open_hook() {
    if (attached_) {
      result_.python_hook = "off: a process attached to has started already, so the hook cannot be put in it";
      return;
    }
    if (options_.python_hook_dir.empty()) {
      result_.python_hook = "off";
      return;
    }
    std::string why_not;
    hook_ = HookChannel::open(why_not);
    if (!hook_) {
      result_.python_hook = "off: " + why_not;
      return;
    }
    result_.python_hook = "on";
    result_.python_hook_dir = options_.python_hook_dir;
    result_.python_hook_socket = hook_->path();
    hook_env_ = hook_environment(options_.python_hook_dir, hook_->path());
  }

  /// --hang-timeout: the watchdog, and the hook's part in it (its beats and its stacks). A process
  /// attached to is not the watcher's to end: its hangs are reported only.
  void open_hang_watch() {
    result_.hang_timeout_s = options_.hang_timeout_s;
    if (options_.hang_timeout_s <= 0) return;
    HangResponseOptions hang;
    hang.timeout_s = options_.hang_timeout_s;
    hang.stop = options_.stop_on_hang && !attached_;
    hang.stacks_file = hook_ ? hook_->stacks_path() : "";
    hang.signal = SIGRTMIN + kStackSignalOffset;
    hang.on_hang = options_.on_hang;
    hangs_ = std::make_unique<HangResponse>(std::move(hang));
    if (hook_) hook_env_.push_back(std::string(kHookHangVariable) + "=" + hangs_->hook_setting());
  }

  /// Attaches to the process, or launches the program with its output through pipes where
  /// epoch lines are looked for.
  void start(const sigset_t& program_mask) {
    if (attached_) {
      root_ = options_.attach_pid;
      tree_->add_root(root_, result_.origin_s, /*launched=*/false);
      tree_->rescan(result_.origin_s, /*at_attach=*/true);
    } else {
      int out_pipe[2] = {-1, -1};
      int err_pipe[2] = {-1, -1};
      const auto close_all = [&] {
        for (const int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
          if (fd >= 0) ::close(fd);
        }
      };
      if (options_.epoch_regex) {
        if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
          const int error = errno;
          close_all();
          throw WatchError(std::string("cannot create a pipe: ") + std::strerror(error) + ".", 1);
        }
        for (const int fd : {out_pipe[0], err_pipe[0]}) ::fcntl(fd, F_SETFL, O_NONBLOCK);
      }
      try {
        root_ = launch(options_.command, program_mask, options_.epoch_regex.has_value(), hook_env_, out_pipe[1],
                       err_pipe[1]);
      } catch (...) {
        close_all();
        throw;
      }
      if (options_.epoch_regex) {
        ::close(out_pipe[1]);
        ::close(err_pipe[1]);
        streams_.push_back(std::make_unique<Passthrough>(out_pipe[0], STDOUT_FILENO));
        streams_.push_back(std::make_unique<Passthrough>(err_pipe[0], STDERR_FILENO));
      }
      tree_->add_root(root_, result_.origin_s, /*launched=*/true);
    }
    result_.root = root_;
    root_fd_.reset(sys::open_pidfd(root_));
    if (options_.on_ready) options_.on_ready(root_, result_.mode, result_.origin_s);
  }

  /// One poll of every descriptor, and what it found; false when the poll itself failed.
  bool wait_once(int signal_fd) {
    fds_.clear();
    fd_owner_.clear();
    watch_fd(signal_fd, 0);
    watch_fd(root_fd_.get(), 0);
    if (connector_) watch_fd(connector_->fd(), 0);
    if (hook_) watch_fd(hook_->fd(), 0);
    for (const auto& stream : streams_) watch_fd(stream->fd(), 0);
    if (!connector_) {
      for (const auto& [pid, fd] : tree_->exit_fds()) {
        if (pid != root_) watch_fd(fd, pid);
      }
    }
    const double now_s = sys::monotonic_s();
    double wake_s = next_sample_s_;
    if (poller_) wake_s = std::min(wake_s, next_look_s_);
    if (root_fd_.get() < 0) wake_s = std::min(wake_s, now_s + look_interval_s_);  // no pidfd: look
    const int timeout_ms = std::max(0, static_cast<int>((wake_s - now_s) * 1000.0 + 0.999));
    const int ready = ::poll(fds_.data(), fds_.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) return false;

    // Each descriptor is read only when poll says so: a look every 5 ms must cost a poll and one
    // small read, no more.
    if (connector_ && is_ready(connector_->fd())) read_events();
    if (std::any_of(streams_.begin(), streams_.end(), [&](const auto& stream) { return is_ready(stream->fd()); })) {
      pump_streams();
    }
    apply_events();
    if (hook_ && is_ready(hook_->fd())) read_hook();
    for (std::size_t i = 0; i < fds_.size(); ++i) {
      if (fd_owner_[i] != 0 && (fds_[i].revents & (POLLIN | POLLHUP)) != 0) {
        tree_->on_exit(fd_owner_[i], sys::monotonic_s(), std::nullopt);
      }
    }
    if (is_ready(signal_fd)) pass_signals_on(signal_fd);
    look_and_sample(sys::monotonic_s());
    check_root();
    return true;
  }

  void watch_fd(int fd, pid_t owner) {
    if (fd < 0) return;
    fds_.push_back(pollfd{fd, POLLIN, 0});
    fd_owner_.push_back(owner);  // the pid whose pidfd it is, 0 for the others
  }

  bool is_ready(int fd) const {
    for (const pollfd& entry : fds_) {
      if (entry.fd == fd) return fd >= 0 && (entry.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
    }
    return false;
  }

  /// Passes each signal on to the program; attached, stops instead (the process is not ours to
  /// signal).
  void pass_signals_on(int signal_fd) {
    signalfd_siginfo info{};
    while (::read(signal_fd, &info, sizeof info) == sizeof info) {
      const int signal_number = static_cast<int>(info.ssi_signo);
      result_.signal_received = signal_number;
      if (attached_) {
        stop_ = true;
        continue;
      }
      // Ctrl-C at a terminal reaches the whole foreground process group, the program with it:
      // passing it on as well would give the program two.
      const bool from_terminal = info.ssi_code == SI_KERNEL && ::getpgid(root_) == ::getpgrp();
      if (!from_terminal) ::kill(root_, signal_number);
    }
  }

  void look_and_sample(double now_s) {
    if (poller_ && now_s >= next_look_s_) {
      poller_->look(*tree_, now_s);
      next_look_s_ = now_s + look_interval_s_;
    }
    if (now_s < next_sample_s_) return;
    tree_->sample(now_s);
    next_sample_s_ = now_s + options_.sample_interval_s;
    if (hangs_) hangs_->tick(now_s, *tree_, root_, result_.hangs);
    // Only while the tree changes, and for a while after (a respawn is reported once it has
    // settled): a long run with thousands of past processes must not copy them all every time.
    if (tree_->changes() != changes_seen_) {
      changes_seen_ = tree_->changes();
      last_change_s_ = now_s;
    }
    if (options_.on_sample && now_s - last_change_s_ < kSampleFollowUpS) {
      options_.on_sample(tree_->records(), result_.epoch_marks_s, now_s);
    }
  }

  /// Notes the end of the program (or of the process attached to), with its wait status.
  void check_root() {
    // Without a pidfd (kernels before 5.3, valgrind), the command is reaped with WNOHANG and a
    // process attached to is looked for: a zombie of ours would answer kill(0) for ever.
    int status = 0;
    bool reaped = false;
    bool root_gone = false;
    if (root_fd_.get() < 0) {
      if (attached_) {
        root_gone = ::kill(root_, 0) != 0 && errno == ESRCH;
      } else {
        reaped = ::waitpid(root_, &status, WNOHANG) == root_;
        root_gone = reaped;
      }
    }
    if (!is_ready(root_fd_.get()) && !root_gone) return;
    root_exited_ = true;
    const double exit_s = sys::monotonic_s();
    read_events();  // the connector queued the exits before the pidfd turned readable
    apply_events();
    if (!attached_ && (reaped || ::waitpid(root_, &status, 0) == root_)) result_.root_wait_status = status;
    tree_->on_exit(root_, exit_s, result_.root_wait_status);
  }

  // Events are read from the connector first and applied after the program's output of the
  // same wake-up: a program prints "Epoch 2" and then starts that epoch's workers, and a line
  // read in the same wake-up as a fork must not be dated after it.
  void read_events() {
    if (!connector_) return;
    const int lost = connector_->drain(events_);
    if (lost > 0) {
      result_.events_lost += lost;
      tree_->rescan(sys::monotonic_s(), false);
    }
  }

  void apply_events() {
    for (const ProcessEvent& event : events_) {
      switch (event.kind) {
        case ProcessEvent::Kind::fork: tree_->on_fork(event.parent, event.pid, event.time_s); break;
        case ProcessEvent::Kind::exec: tree_->on_exec(event.pid, event.time_s); break;
        case ProcessEvent::Kind::exit:
          if (event.pid == root_ && attached_) result_.root_wait_status = event.wait_status;
          // The command's own status comes from waitpid: the same, but certain.
          tree_->on_exit(event.pid, event.time_s, event.wait_status);
          break;
      }
    }
    events_.clear();
  }

  void pump_streams() {
    double stamp_s = sys::monotonic_s();
    for (const ProcessEvent& event : events_) stamp_s = std::min(stamp_s, event.time_s);
    for (const auto& stream : streams_) {
      if (!stream->open()) continue;
      const int matched = stream->pump(*options_.epoch_regex);
      for (int i = 0; i < matched; ++i) result_.epoch_marks_s.push_back(stamp_s);
    }
  }

  // Hook events come after the process events of the same wake-up: a worker's fork is known
  // before the event that names its pid.
  void read_hook() {
    if (!hook_) return;
    const std::size_t before = result_.hook_events.size();
    hook_->drain(result_.hook_events, sys::monotonic_s());
    // A pass's start is where its process's descriptors are counted: once a pass, never a batch.
    for (std::size_t i = before; i < result_.hook_events.size(); ++i) {
      HookEvent& event = result_.hook_events[i];
      const bool pass_start = event.kind == HookEventKind::iterator_made || event.kind == HookEventKind::iterator_reset;
      if (pass_start && tree_->is_live_member(event.pid)) event.fds = count_fds(event.pid);
      if (hangs_) hangs_->on_hook_event(event);
    }
    if (options_.on_hook_event) {
      for (std::size_t i = before; i < result_.hook_events.size(); ++i) options_.on_hook_event(result_.hook_events[i]);
    }
  }

  const WatchOptions& options_;
  const bool attached_;
  WatchResult result_;
  std::unique_ptr<ProcConnector> connector_;
  std::unique_ptr<ProcPoller> poller_;
  std::unique_ptr<HookChannel> hook_;
  std::vector<std::string> hook_env_;
  std::unique_ptr<ProcessTree> tree_;
  std::unique_ptr<HangResponse> hangs_;
  std::vector<std::unique_ptr<Passthrough>> streams_;
  pid_t root_ = 0;
  sys::UniqueFd root_fd_;
  std::vector<ProcessEvent> events_;
  std::vector<pollfd> fds_;
  std::vector<pid_t> fd_owner_;
  double look_interval_s_ = 0.0;
  double next_look_s_ = 0.0;
  double next_sample_s_ = 0.0;
  double last_change_s_ = 0.0;
  std::uint64_t changes_seen_ = 0;
  bool root_exited_ = false;
  bool stop_ = false;
};

}  // namespace

WatchResult run_watch(const WatchOptions& options) { return WatchLoop(options).run(); }

}  // namespace dlreset::watch
