// The kernel's process events connector (netlink, CN_IDX_PROC): every fork, exec and exit on the
// machine as it happens, with the kernel's timestamp and, for an exit, its status. Opening it
// takes CAP_NET_ADMIN (root), and inside some containers it opens but stays silent, so
// `open()` proves that events arrive before the watcher relies on it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "watch/tree/process_event.h"

namespace dlreset::watch {

class ProcConnector {
 public:
  /// Subscribes and checks, with a child of its own, that its fork event arrives; nothing, and
  /// the reason in `why_not`, when the connector cannot be used here.
  static std::unique_ptr<ProcConnector> open(std::string& why_not);
  ~ProcConnector();
  ProcConnector(const ProcConnector&) = delete;
  ProcConnector& operator=(const ProcConnector&) = delete;

  /// The socket to poll for readability.
  int fd() const { return fd_; }

  /// Appends the queued events of processes (thread events are dropped). Returns how many
  /// reports the kernel could not queue since the last call (ENOBUFS): if any, the caller's
  /// picture is incomplete and it should rescan /proc.
  int drain(std::vector<ProcessEvent>& out);

 private:
  explicit ProcConnector(int fd) : fd_(fd) {}
  bool subscribe(bool listen);

  int fd_;
};

}  // namespace dlreset::watch
