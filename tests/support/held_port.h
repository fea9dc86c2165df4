// A TCP port that this process holds, for tests of what a program does with a port in use.
#pragma once

namespace dlreset::testing {

/// Binds a socket to a port the kernel chooses, on every IPv4 address, and listens on it until
/// destroyed. port() is 0 when that failed.
class HeldPort {
 public:
  HeldPort();
  ~HeldPort();
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;

  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace dlreset::testing
