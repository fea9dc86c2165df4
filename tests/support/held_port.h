// A TCP port that this process holds, for tests of what a program does with a port in use.
#pragma once

#include "harness/sys/unique_fd.h"

namespace dlreset::testing {

/// Binds a socket to a port the kernel chooses, on every IPv4 address, and listens on it until
/// destroyed. port() is 0 when that failed. Moves, never copies: one socket, one holder.
class HeldPort {
 public:
  HeldPort();

  int port() const { return port_; }

 private:
  sys::UniqueFd fd_;
  int port_ = 0;
};

}  // namespace dlreset::testing
