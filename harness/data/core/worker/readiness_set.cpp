#include "harness/data/core/worker/readiness_set.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "harness/data/core/errors.h"
#include "harness/data/core/worker/transport/parent_only_fds.h"

namespace dlreset::data::detail {

ReadinessSet::ReadinessSet(std::string loader) : loader_(std::move(loader)) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    throw DataLoaderError("Cannot create the wake-up descriptor of loader '" + loader_ + "': " + std::strerror(errno) +
                          ". Raise the limit on open files (ulimit -n).");
  }
  register_parent_only_fd(wake_fd_);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    const int error = errno;
    unregister_parent_only_fd(wake_fd_);
    ::close(wake_fd_);
    throw DataLoaderError("Cannot create the epoll descriptor of loader '" + loader_ + "': " + std::strerror(error) +
                          ". Raise the limit on open files (ulimit -n).");
  }
  register_parent_only_fd(epoll_fd_);
  try {
    add(wake_fd_, Kind::wake, 0);
  } catch (...) {
    for (const int fd : {wake_fd_, epoll_fd_}) {
      unregister_parent_only_fd(fd);
      ::close(fd);
    }
    throw;
  }
}

ReadinessSet::~ReadinessSet() {
  for (const int fd : {wake_fd_, epoll_fd_}) {
    unregister_parent_only_fd(fd);
    ::close(fd);
  }
}

void ReadinessSet::add(int fd, Kind kind, std::size_t worker) {
  epoll_event event{};
  event.events = kind == Kind::bell ? EPOLLIN | EPOLLET : EPOLLIN;
  event.data.u64 = (static_cast<std::uint64_t>(kind) << 32) | worker;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    throw DataLoaderError("Cannot watch a descriptor of loader '" + loader_ + "' with epoll: " + std::strerror(errno) +
                          ". Raise the limit on open files (ulimit -n).");
  }
  // Sized as descriptors are added, so that no wait allocates.
  events_.resize(events_.size() + 1);
  ready_.reserve(events_.size());
}

void ReadinessSet::remove(int fd) {
  if (fd >= 0) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

void ReadinessSet::wake() {
  const std::uint64_t one = 1;
  // Non-blocking: a counter already pending is wake-up enough.
  [[maybe_unused]] const ssize_t written = ::write(wake_fd_, &one, sizeof one);
}

int ReadinessSet::wait(int timeout_ms, bool& woken) {
  ready_.clear();
  woken = false;
  const int count = ::epoll_wait(epoll_fd_, events_.data(), static_cast<int>(events_.size()), timeout_ms);
  for (int e = 0; e < count; ++e) {
    const std::uint64_t data = events_[static_cast<std::size_t>(e)].data.u64;
    const auto kind = static_cast<Kind>(data >> 32);
    if (kind == Kind::wake) {
      std::uint64_t counter = 0;
      [[maybe_unused]] const ssize_t got = ::read(wake_fd_, &counter, sizeof counter);
      woken = true;
      continue;
    }
    ready_.push_back({kind, static_cast<std::size_t>(data & 0xffffffffu)});
  }
  return count;
}

}  // namespace dlreset::data::detail
