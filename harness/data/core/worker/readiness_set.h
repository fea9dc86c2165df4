// What a process pool's receive() waits on, in one epoll_wait: every worker's channel, pidfd and
// answer bell, and a wake-up descriptor that another thread may write.
#pragma once

#include <sys/epoll.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dlreset::data::detail {

/// Registers each descriptor once, so that a wait costs one system call whatever the number of
/// workers (poll() registered and removed every descriptor at every wait). Its own two
/// descriptors are the main process's alone (parent_only_fds.h): no forked worker keeps them.
class ReadinessSet {
 public:
  /// Whose a descriptor is.
  /// `deaths`: the WorkerDeathWatch's epoll set, ready when a worker of any loader has died.
  enum class Kind : std::uint32_t { channel, pidfd, wake, bell, deaths };
  struct Ready {
    Kind kind;
    std::size_t worker;  ///< The worker's index; 0 for the wake-up and the death watch.
  };

  /// Throws DataLoaderError, naming `loader`, when the process is out of descriptors.
  explicit ReadinessSet(std::string loader);
  ~ReadinessSet();
  ReadinessSet(const ReadinessSet&) = delete;
  ReadinessSet& operator=(const ReadinessSet&) = delete;

  /// Adds `fd`, of `kind`, of worker `worker`. A bell is edge-triggered: every ring is one event
  /// and its count is never read, a system call less a wake-up; the rest stay ready until read,
  /// as poll() sees them. Throws DataLoaderError when epoll refuses it.
  void add(int fd, Kind kind, std::size_t worker);
  /// Takes `fd` out; nothing for -1. A forked worker may still hold a copy for a moment, which
  /// would keep it registered.
  void remove(int fd);
  /// Thread-safe and non-blocking: the next wait(), or the one under way, returns at once.
  void wake();

  /// Waits up to `timeout_ms` (0: a look) and lists what is ready in ready(), the wake-up not
  /// among them: that sets `woken` (its counter read). Returns epoll_wait's result: how many
  /// descriptors were ready, 0 on a timeout, -1 with errno set.
  int wait(int timeout_ms, bool& woken);
  /// What the last wait() found ready.
  const std::vector<Ready>& ready() const { return ready_; }

 private:
  std::string loader_;
  int wake_fd_ = -1;  ///< An eventfd that wake() writes.
  int epoll_fd_ = -1;
  /// Where a wait's events land, and what it found: both sized by add(), so no wait allocates.
  std::vector<epoll_event> events_;
  std::vector<Ready> ready_;
};

}  // namespace dlreset::data::detail
