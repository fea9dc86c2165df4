#include "watch/watcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "watch/hook_channel.h"
#include "watch/launch.h"
#include "watch/proc_connector.h"
#include "watch/proc_poller.h"
#include "watch/process_tree.h"


namespace dlreset::watch {

namespace {

/// How long after the tree last changed on_sample is still called.
constexpr double kSampleFollowUpS = 1.0;

double cpu_time_s() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

void check_attachable(pid_t pid) {
  if (pid <= 0) {
    throw WatchError("--pid " + std::to_string(pid) + " is not a process id; give the pid of a running process.", 2);
  }
  if (pid == ::getpid()) throw WatchError("--pid " + std::to_string(pid) + " is dlreset watch itself.", 2);
  if (::kill(pid, 0) != 0 && errno == ESRCH) {
    throw WatchError("--pid " + std::to_string(pid) + ": there is no such process (it may have exited already).", 2);
  }
  if (!read_proc_stat_of(pid)) {
    throw WatchError("--pid " + std::to_string(pid) + ": /proc/" + std::to_string(pid) +
                         "/stat cannot be read, so the process cannot be watched (is /proc mounted?).", 2);
  }
  if (read_cmdline(pid).empty() && ::access(("/proc/" + std::to_string(pid) + "/cmdline").c_str(), R_OK) != 0) {
    throw WatchError("--pid " + std::to_string(pid) + ": its command line cannot be read (" +
                         std::strerror(errno) + "); watch it as its owner or as root.", 2);
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

WatchResult run_watch(const WatchOptions& options) {
  const bool attached = options.command.empty();
  if (attached) check_attachable(options.attach_pid);
  if (options.poll_ms <= 0) {
    throw WatchError("--poll-ms " + std::to_string(options.poll_ms) + " is not a positive interval; give 1 or more (default 5).", 2);
  }

  WatchResult result;
  result.attached = attached;
  result.poll_ms = options.poll_ms;

  std::unique_ptr<ProcConnector> connector;
  if (options.mode != WatchMode::poll) {
    connector = ProcConnector::open(result.mode_reason);
    if (!connector && options.mode == WatchMode::connector) {
      throw WatchError("the process events connector cannot be used here: " + result.mode_reason +
                           "; use --mode poll (or auto).", 2);
    }
  } else {
    result.mode_reason = "--mode poll";
  }
  result.mode = connector ? WatchMode::connector : WatchMode::poll;
  if (connector) result.mode_reason.clear();

  // The Python hook: a socket for its events, and the environment that loads it.
  std::unique_ptr<HookChannel> hook;
  std::vector<std::string> hook_env;
  if (attached) {
    result.python_hook = "off: a process attached to has started already, so the hook cannot be put in it";
  } else if (options.python_hook_dir.empty()) {
    result.python_hook = "off";
  } else {
    std::string why_not;
    hook = HookChannel::open(why_not);
    if (hook) {
      result.python_hook = "on";
      result.python_hook_dir = options.python_hook_dir;
      result.python_hook_socket = hook->path();
      hook_env = hook_environment(options.python_hook_dir, hook->path());
    } else {
      result.python_hook = "off: " + why_not;
    }
  }
  ProcessTree tree(/*exit_fds=*/!connector);

  // SIGINT and SIGTERM arrive through a signalfd, so the loop decides what they mean; the
  // program gets the mask the watcher had, and the default SIGPIPE.
  sigset_t watched_signals;
  sigemptyset(&watched_signals);
  sigaddset(&watched_signals, SIGINT);
  sigaddset(&watched_signals, SIGTERM);
  sigaddset(&watched_signals, SIGHUP);
  sigset_t previous_mask;
  ::sigprocmask(SIG_BLOCK, &watched_signals, &previous_mask);
  struct sigaction ignore_pipe {};
  ignore_pipe.sa_handler = SIG_IGN;
  struct sigaction previous_pipe {};
  ::sigaction(SIGPIPE, &ignore_pipe, &previous_pipe);
  struct Restore {
    sigset_t mask;
    struct sigaction pipe;
    ~Restore() {
      ::sigaction(SIGPIPE, &pipe, nullptr);
      // Signals that came in the last moment stay pending and act when unblocked; none is lost.
      ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    }
  } restore{previous_mask, previous_pipe};
  Fd signal_fd(::signalfd(-1, &watched_signals, SFD_CLOEXEC | SFD_NONBLOCK));

  std::vector<std::unique_ptr<Passthrough>> streams;
  // Polling starts from the newest pid before the command starts, so its first children count.
  std::unique_ptr<ProcPoller> poller;
  if (!connector) poller = std::make_unique<ProcPoller>();
  // The watcher's own share is counted from here: opening the connector (and its probe) is a
  // one-off cost, not overhead that grows with the watch.
  const double cpu_at_start = cpu_time_s();
  result.origin_s = monotonic_s();
  pid_t root = 0;
  if (attached) {
    root = options.attach_pid;
    tree.add_root(root, result.origin_s, /*launched=*/false);
    tree.rescan(result.origin_s, /*at_attach=*/true);
  } else {
    int out_pipe[2] = {-1, -1};
    int err_pipe[2] = {-1, -1};
    if (options.epoch_regex) {
      if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
        for (const int fd : {out_pipe[0], out_pipe[1]}) {
          if (fd >= 0) ::close(fd);
        }
        throw WatchError(std::string("cannot create a pipe: ") + std::strerror(errno) + ".", 1);
      }
      for (const int fd : {out_pipe[0], err_pipe[0]}) ::fcntl(fd, F_SETFL, O_NONBLOCK);
    }
    try {
      root = launch(options.command, previous_mask, options.epoch_regex.has_value(), hook_env, out_pipe[1],
                    err_pipe[1]);
    } catch (...) {
      for (const int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
        if (fd >= 0) ::close(fd);
      }
      throw;
    }
    if (options.epoch_regex) {
      ::close(out_pipe[1]);
      ::close(err_pipe[1]);
      streams.push_back(std::make_unique<Passthrough>(out_pipe[0], STDOUT_FILENO));
      streams.push_back(std::make_unique<Passthrough>(err_pipe[0], STDERR_FILENO));
    }
    tree.add_root(root, result.origin_s, /*launched=*/true);
  }
  result.root = root;
  Fd root_fd(open_pidfd(root));
  if (options.on_ready) options.on_ready(root, result.mode, result.origin_s);

  const double look_interval_s = options.poll_ms / 1000.0;
  double next_look_s = result.origin_s + look_interval_s;
  double next_sample_s = result.origin_s + options.sample_interval_s;
  std::vector<ProcessEvent> events;

  // Events are read from the connector first and applied after the program's output of the same
  // wake-up: a program prints "Epoch 2" and then starts that epoch's workers, and a line read in
  // the same wake-up as a fork must not be dated after it.
  const auto read_events = [&]() {
    if (!connector) return;
    const int lost = connector->drain(events);
    if (lost > 0) {
      result.events_lost += lost;
      tree.rescan(monotonic_s(), false);
    }
  };
  const auto apply_events = [&]() {
    for (const ProcessEvent& event : events) {
      switch (event.kind) {
        case ProcessEvent::Kind::fork: tree.on_fork(event.parent, event.pid, event.time_s); break;
        case ProcessEvent::Kind::exec: tree.on_exec(event.pid, event.time_s); break;
        case ProcessEvent::Kind::exit:
          if (event.pid == root && attached) result.root_wait_status = event.wait_status;
          // The command's own status comes from waitpid below: the same, but certain.
          tree.on_exit(event.pid, event.time_s, event.wait_status);
          break;
      }
    }
    events.clear();
  };
  const auto pump_streams = [&]() {
    double stamp_s = monotonic_s();
    for (const ProcessEvent& event : events) stamp_s = std::min(stamp_s, event.time_s);
    for (const auto& stream : streams) {
      if (!stream->open()) continue;
      const int matched = stream->pump(*options.epoch_regex);
      for (int i = 0; i < matched; ++i) result.epoch_marks_s.push_back(stamp_s);
    }
  };
  const auto handle_events = [&]() {
    read_events();
    apply_events();
  };
  // Hook events come after the process events of the same wake-up: a worker's fork is known
  // before the event that names its pid.
  const auto read_hook = [&]() {
    if (!hook) return;
    const std::size_t before = result.hook_events.size();
    hook->drain(result.hook_events, monotonic_s());
    if (options.on_hook_event) {
      for (std::size_t i = before; i < result.hook_events.size(); ++i) options.on_hook_event(result.hook_events[i]);
    }
  };

  std::uint64_t changes_seen = tree.changes();
  double last_change_s = result.origin_s;
  bool root_exited = false;
  bool stop = false;
  std::vector<pollfd> fds;
  std::vector<pid_t> fd_owner;  // pid whose pidfd a pollfd is, 0 for the others
  while (!root_exited && !stop) {
    fds.clear();
    fd_owner.clear();
    const auto watch_fd = [&](int fd, pid_t owner) {
      if (fd < 0) return;
      fds.push_back(pollfd{fd, POLLIN, 0});
      fd_owner.push_back(owner);
    };
    watch_fd(signal_fd.get(), 0);
    watch_fd(root_fd.get(), 0);
    if (connector) watch_fd(connector->fd(), 0);
    if (hook) watch_fd(hook->fd(), 0);
    for (const auto& stream : streams) watch_fd(stream->fd(), 0);
    if (!connector) {
      for (const auto& [pid, fd] : tree.exit_fds()) {
        if (pid != root) watch_fd(fd, pid);
      }
    }
    const double now_s = monotonic_s();
    double wake_s = next_sample_s;
    if (poller) wake_s = std::min(wake_s, next_look_s);
    if (root_fd.get() < 0) wake_s = std::min(wake_s, now_s + look_interval_s);  // no pidfd: look
    const int timeout_ms = std::max(0, static_cast<int>((wake_s - now_s) * 1000.0 + 0.999));
    const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) break;

    // Each descriptor is read only when poll says so: a look every 5 ms must cost a poll and one
    // small read, no more.
    const auto is_ready = [&](int fd) {
      for (const pollfd& entry : fds) {
        if (entry.fd == fd) return fd >= 0 && (entry.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
      }
      return false;
    };
    if (connector && is_ready(connector->fd())) read_events();
    if (std::any_of(streams.begin(), streams.end(), [&](const auto& stream) { return is_ready(stream->fd()); })) {
      pump_streams();
    }
    apply_events();
    if (hook && is_ready(hook->fd())) read_hook();
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fd_owner[i] != 0 && (fds[i].revents & (POLLIN | POLLHUP)) != 0) {
        tree.on_exit(fd_owner[i], monotonic_s(), std::nullopt);
      }
    }
    signalfd_siginfo info{};
    while (is_ready(signal_fd.get()) && ::read(signal_fd.get(), &info, sizeof info) == sizeof info) {
      const int signal_number = static_cast<int>(info.ssi_signo);
      result.signal_received = signal_number;
      if (attached) {
        stop = true;  // the process attached to is not ours to signal
        continue;
      }
      // Ctrl-C at a terminal reaches the whole foreground process group, the program with it:
      // passing it on as well would give the program two.
      const bool from_terminal = info.ssi_code == SI_KERNEL && ::getpgid(root) == ::getpgrp();
      if (!from_terminal) ::kill(root, signal_number);
    }

    const double after_s = monotonic_s();
    if (poller && after_s >= next_look_s) {
      poller->look(tree, after_s);
      next_look_s = after_s + look_interval_s;
    }
    if (after_s >= next_sample_s) {
      tree.sample(after_s);
      next_sample_s = after_s + options.sample_interval_s;
      // Only while the tree changes, and for a while after (a respawn is reported once it has
      // settled): a long run with thousands of past processes must not copy them all every time.
      if (tree.changes() != changes_seen) {
        changes_seen = tree.changes();
        last_change_s = after_s;
      }
      if (options.on_sample && after_s - last_change_s < kSampleFollowUpS) {
        options.on_sample(tree.records(), result.epoch_marks_s, after_s);
      }
    }

    // Without a pidfd (kernels before 5.3, valgrind), the command is reaped with WNOHANG and a
    // process attached to is looked for: a zombie of ours would answer kill(0) for ever.
    int status = 0;
    bool reaped = false;
    bool root_gone = false;
    if (root_fd.get() < 0) {
      if (attached) {
        root_gone = ::kill(root, 0) != 0 && errno == ESRCH;
      } else {
        reaped = ::waitpid(root, &status, WNOHANG) == root;
        root_gone = reaped;
      }
    }
    if (is_ready(root_fd.get()) || root_gone) {
      root_exited = true;
      const double exit_s = monotonic_s();
      handle_events();  // the connector queued the exits before the pidfd turned readable
      if (!attached && (reaped || ::waitpid(root, &status, 0) == root)) result.root_wait_status = status;
      tree.on_exit(root, exit_s, result.root_wait_status);
    }
  }

  // What the program wrote last; a descendant that still holds the pipes open (a worker left
  // behind, a `sleep &`) must not keep the watcher waiting for their end.
  read_events();
  pump_streams();
  apply_events();
  read_hook();
  tree.sample(monotonic_s());
  result.end_s = monotonic_s();
  if (hook) result.hook_malformed = hook->malformed();
  result.processes = tree.records();
  result.watcher_cpu_s = cpu_time_s() - cpu_at_start;
  return result;
}

}  // namespace dlreset::watch
