// What a process pool waits on, in one epoll_wait: every worker's channel, pidfd and answer bell,
// a wake-up descriptor that another thread may write, and the death watch.
#pragma once

#include <sys/epoll.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/sys/unique_fd.h"

namespace dlreset::data::detail {

/// Registers each descriptor once, so that a wait costs one system call whatever the number of
/// workers. Every wait of a pool goes through it: receive()'s for batches, and, narrowed to the
/// workers' own descriptors, a send's wait for room and shutdown's for the workers to go. Its
/// own two descriptors are the main process's alone (parent_only_fds.h): no forked worker keeps
/// them.
class ReadinessSet {
 public:
  /// Whose a descriptor is.
  /// `deaths`: the WorkerDeathWatch's epoll set, ready when a worker of any loader has died.
  enum class Kind : std::uint32_t { channel, pidfd, wake, bell, deaths };
  struct Ready {
    Kind kind;
    std::size_t worker;     ///< The worker's index; 0 for the wake-up and the death watch.
    bool writable = false;  ///< The channel narrow() watches for room has room.
  };

  /// Throws DataLoaderError, naming `loader`, when the process is out of descriptors.
  explicit ReadinessSet(std::string loader);
  ~ReadinessSet();
  ReadinessSet(const ReadinessSet&) = delete;
  ReadinessSet& operator=(const ReadinessSet&) = delete;

  /// Adds `fd`, of `kind`, of worker `worker`. A bell is edge-triggered: every ring is one event
  /// and its count is never read, a system call less a wake-up; the rest stay ready until read.
  /// Throws DataLoaderError when epoll refuses it.
  void add(int fd, Kind kind, std::size_t worker);
  /// Takes `fd` out; nothing for -1 or a descriptor not in the set. A forked worker may still
  /// hold a copy for a moment, which would keep it registered.
  void remove(int fd);
  /// Thread-safe and non-blocking: the next wait() for batches, or the one under way, returns at
  /// once.
  void wake();

  /// Until widen(), waits see only the workers' descriptors: the wake-up and the death watch
  /// stay ready, unread, for the next wait for batches, which a wait for room or for exits must
  /// not take from it nor spin on. `room_fd`, a channel of worker `worker` (-1: none), is also
  /// watched for room to write. Narrowing again as before costs nothing, and so does widening
  /// a set not narrowed.
  void narrow(int room_fd = -1, std::size_t worker = 0);
  void widen();

  /// Waits up to `timeout_ms` (0: a look) and lists what is ready in ready(), the wake-up not
  /// among them: that sets `woken` (its counter read). Returns epoll_wait's result: how many
  /// descriptors were ready, 0 on a timeout, -1 with errno set.
  int wait(int timeout_ms, bool& woken);
  /// What the last wait() found ready.
  const std::vector<Ready>& ready() const { return ready_; }

 private:
  /// Sets the events `fd` is watched for; errors are ignored, as for a descriptor already gone.
  void watch(int fd, std::uint32_t events, Kind kind, std::size_t worker);

  std::string loader_;
  sys::UniqueFd wake_fd_;  ///< An eventfd that wake() writes.
  sys::UniqueFd epoll_fd_;
  int deaths_fd_ = -1;  ///< The death watch's descriptor, once added.
  int room_fd_ = -1;    ///< The channel narrow() watches for room, or -1.
  std::size_t room_worker_ = 0;
  bool narrowed_ = false;
  /// Where a wait's events land, and what it found: both sized by add(), so no wait allocates.
  std::vector<epoll_event> events_;
  std::vector<Ready> ready_;
};

}  // namespace dlreset::data::detail
