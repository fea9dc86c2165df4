#include "watch/tree/proc_connector.h"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "harness/sys/clock.h"

namespace dlreset::watch {

namespace {

/// The type of proc_event's `what`: an enum nested in the struct in kernel headers before 6.6
/// (proc_event::PROC_EVENT_FORK), one at file scope from 6.6 on (PROC_EVENT_FORK). Naming the
/// enumerators through the member's own type works with both.
using ProcEventWhat = decltype(proc_event::what);

/// How long open() waits for the fork event of its own probe child. The kernel queues the
/// event before fork() returns, so on a machine where the connector works it is there at once;
/// the bound only decides how long a silent connector delays the fall-back to polling.
constexpr int kProbeTimeoutMs = 250;

/// The socket's receive buffer: every process event of the machine passes through it, so a
/// busy machine with a slow reader must not overflow it. 4 MiB holds some 100,000 events.
constexpr int kConnectorReceiveBufferBytes = 4 << 20;

}  // namespace

std::unique_ptr<ProcConnector> ProcConnector::open(std::string& why_not) {
  const int fd = ::socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
  if (fd < 0) {
    why_not = std::string("cannot open a netlink connector socket: ") + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<ProcConnector> connector(new ProcConnector(fd));
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &kConnectorReceiveBufferBytes, sizeof kConnectorReceiveBufferBytes);
  sockaddr_nl address{};
  address.nl_family = AF_NETLINK;
  address.nl_groups = CN_IDX_PROC;
  address.nl_pid = 0;  // the kernel picks the port
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    why_not = std::string("cannot join the process events group: ") + std::strerror(errno) +
              (errno == EPERM ? " (it needs root)" : "");
    return nullptr;
  }
  if (!connector->subscribe(true)) {
    why_not = std::string("cannot subscribe to process events: ") + std::strerror(errno) +
              (errno == EPERM ? " (it needs root)" : "");
    return nullptr;
  }
  const pid_t probe = ::fork();
  if (probe < 0) {
    why_not = std::string("cannot fork the probe process: ") + std::strerror(errno);
    return nullptr;
  }
  if (probe == 0) ::_exit(0);
  ::waitpid(probe, nullptr, 0);
  std::vector<ProcessEvent> events;
  const double deadline = sys::monotonic_s() + kProbeTimeoutMs / 1000.0;
  for (;;) {
    connector->drain(events);
    for (const ProcessEvent& event : events) {
      if (event.kind == ProcessEvent::Kind::fork && event.pid == probe) return connector;
    }
    const double left_ms = (deadline - sys::monotonic_s()) * 1000.0;
    if (left_ms <= 0) break;
    pollfd ready{fd, POLLIN, 0};
    ::poll(&ready, 1, static_cast<int>(left_ms) + 1);
  }
  why_not = "the process events connector delivered no event for a test process (as inside "
            "some containers)";
  return nullptr;
}

ProcConnector::~ProcConnector() {
  subscribe(false);
  ::close(fd_);
}

bool ProcConnector::subscribe(bool listen) {
  // nlmsghdr, then cn_msg, whose flexible data[] holds the one operation word.
  alignas(nlmsghdr) std::array<char, NLMSG_SPACE(sizeof(cn_msg) + sizeof(proc_cn_mcast_op))> request{};
  auto* header = reinterpret_cast<nlmsghdr*>(request.data());
  header->nlmsg_len = request.size();
  header->nlmsg_type = NLMSG_DONE;
  header->nlmsg_pid = static_cast<__u32>(::getpid());
  auto* message = static_cast<cn_msg*>(NLMSG_DATA(header));
  message->id.idx = CN_IDX_PROC;
  message->id.val = CN_VAL_PROC;
  message->len = sizeof(proc_cn_mcast_op);
  const proc_cn_mcast_op op = listen ? PROC_CN_MCAST_LISTEN : PROC_CN_MCAST_IGNORE;
  std::memcpy(message->data, &op, sizeof op);
  return ::send(fd_, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size());
}

int ProcConnector::drain(std::vector<ProcessEvent>& out) {
  int lost = 0;
  alignas(nlmsghdr) std::array<char, 16384> buffer{};
  for (;;) {
    const ssize_t received = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (received < 0) {
      if (errno == EINTR) continue;
      if (errno == ENOBUFS) {
        ++lost;
        continue;
      }
      break;  // EAGAIN: nothing more queued
    }
    int left = static_cast<int>(received);
    for (auto* header = reinterpret_cast<nlmsghdr*>(buffer.data()); NLMSG_OK(header, left);
         header = NLMSG_NEXT(header, left)) {
      if (header->nlmsg_type == NLMSG_NOOP || header->nlmsg_type == NLMSG_ERROR) continue;
      const auto* message = static_cast<const cn_msg*>(NLMSG_DATA(header));
      if (message->id.idx != CN_IDX_PROC || message->id.val != CN_VAL_PROC) continue;
      // The event sits 4-byte aligned after cn_msg, and holds a 64-bit timestamp: copy it out
      // rather than read it in place.
      proc_event copy{};
      std::memcpy(&copy, message->data, std::min<std::size_t>(sizeof copy, message->len));
      const proc_event* event = &copy;
      ProcessEvent reduced;
      reduced.time_s = static_cast<double>(event->timestamp_ns) * 1e-9;
      switch (event->what) {
        case ProcEventWhat::PROC_EVENT_FORK:
          // A new thread is a fork event too; only a new thread group is a process.
          if (event->event_data.fork.child_pid != event->event_data.fork.child_tgid) continue;
          reduced.kind = ProcessEvent::Kind::fork;
          reduced.pid = event->event_data.fork.child_tgid;
          reduced.parent = event->event_data.fork.parent_tgid;
          break;
        case ProcEventWhat::PROC_EVENT_EXEC:
          reduced.kind = ProcessEvent::Kind::exec;
          reduced.pid = event->event_data.exec.process_tgid;
          break;
        case ProcEventWhat::PROC_EVENT_EXIT:
          // Each thread's exit is reported; the leader's stands for the process.
          if (event->event_data.exit.process_pid != event->event_data.exit.process_tgid) continue;
          reduced.kind = ProcessEvent::Kind::exit;
          reduced.pid = event->event_data.exit.process_tgid;
          reduced.wait_status = static_cast<int>(event->event_data.exit.exit_code);
          break;
        default: continue;
      }
      out.push_back(reduced);
    }
  }
  return lost;
}

}  // namespace dlreset::watch
