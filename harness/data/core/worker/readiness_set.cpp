#include "harness/data/core/worker/readiness_set.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "harness/data/core/errors.h"
#include "harness/data/core/worker/transport/parent_only_fds.h"

namespace dlreset::data::detail {

namespace {

std::uint64_t data_of(ReadinessSet::Kind kind, std::size_t worker) {
  return (static_cast<std::uint64_t>(kind) << 32) | worker;
}

}  // namespace

ReadinessSet::ReadinessSet(std::string loader) : loader_(std::move(loader)) {
  wake_fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (wake_fd_.get() < 0) {
    throw DataLoaderError("Cannot create the wake-up descriptor of loader '" + loader_ + "': " + std::strerror(errno) +
                          ". Raise the limit on open files (ulimit -n).");
  }
  epoll_fd_.reset(::epoll_create1(EPOLL_CLOEXEC));
  if (epoll_fd_.get() < 0) {
    throw DataLoaderError("Cannot create the epoll descriptor of loader '" + loader_ + "': " + std::strerror(errno) +
                          ". Raise the limit on open files (ulimit -n).");
  }
  // Registered once both exist, so that every way out of here leaves none registered.
  register_parent_only_fd(wake_fd_.get());
  register_parent_only_fd(epoll_fd_.get());
  try {
    add(wake_fd_.get(), Kind::wake, 0);
  } catch (...) {
    unregister_parent_only_fd(wake_fd_.get());
    unregister_parent_only_fd(epoll_fd_.get());
    throw;
  }
}

ReadinessSet::~ReadinessSet() {
  // Before the members close them: a descriptor opened next may get the same number.
  unregister_parent_only_fd(wake_fd_.get());
  unregister_parent_only_fd(epoll_fd_.get());
}

void ReadinessSet::add(int fd, Kind kind, std::size_t worker) {
  epoll_event event{};
  event.events = kind == Kind::bell ? EPOLLIN | EPOLLET : EPOLLIN;
  event.data.u64 = data_of(kind, worker);
  if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &event) != 0) {
    throw DataLoaderError("Cannot watch a descriptor of loader '" + loader_ + "' with epoll: " + std::strerror(errno) +
                          ". Raise the limit on open files (ulimit -n).");
  }
  if (kind == Kind::deaths) deaths_fd_ = fd;
  // Sized as descriptors are added, so that no wait allocates.
  events_.resize(events_.size() + 1);
  ready_.reserve(events_.size());
}

void ReadinessSet::remove(int fd) {
  if (fd < 0) return;
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
  if (fd == room_fd_) room_fd_ = -1;
  if (fd == deaths_fd_) deaths_fd_ = -1;
}

void ReadinessSet::wake() {
  const std::uint64_t one = 1;
  // Non-blocking: a counter already pending is wake-up enough.
  [[maybe_unused]] const ssize_t written = ::write(wake_fd_.get(), &one, sizeof one);
}

void ReadinessSet::watch(int fd, std::uint32_t events, Kind kind, std::size_t worker) {
  if (fd < 0) return;
  epoll_event event{};
  event.events = events;
  event.data.u64 = data_of(kind, worker);
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, fd, &event);
}

void ReadinessSet::narrow(int room_fd, std::size_t worker) {
  if (narrowed_ && room_fd == room_fd_) return;
  widen();
  narrowed_ = true;
  // Kept in the set with no events: a level-triggered descriptor that is ready stays so.
  watch(wake_fd_.get(), 0, Kind::wake, 0);
  watch(deaths_fd_, 0, Kind::deaths, 0);
  room_fd_ = room_fd;
  room_worker_ = worker;
  watch(room_fd_, EPOLLIN | EPOLLOUT, Kind::channel, worker);
}

void ReadinessSet::widen() {
  if (!narrowed_) return;
  narrowed_ = false;
  watch(wake_fd_.get(), EPOLLIN, Kind::wake, 0);
  watch(deaths_fd_, EPOLLIN, Kind::deaths, 0);
  watch(room_fd_, EPOLLIN, Kind::channel, room_worker_);
  room_fd_ = -1;
}

int ReadinessSet::wait(int timeout_ms, bool& woken) {
  ready_.clear();
  woken = false;
  const int count = ::epoll_wait(epoll_fd_.get(), events_.data(), static_cast<int>(events_.size()), timeout_ms);
  for (int e = 0; e < count; ++e) {
    const epoll_event& event = events_[static_cast<std::size_t>(e)];
    const auto kind = static_cast<Kind>(event.data.u64 >> 32);
    if (kind == Kind::wake) {
      std::uint64_t counter = 0;
      [[maybe_unused]] const ssize_t got = ::read(wake_fd_.get(), &counter, sizeof counter);
      woken = true;
      continue;
    }
    ready_.push_back({kind, static_cast<std::size_t>(event.data.u64 & 0xffffffffu), (event.events & EPOLLOUT) != 0});
  }
  return count;
}

}  // namespace dlreset::data::detail
