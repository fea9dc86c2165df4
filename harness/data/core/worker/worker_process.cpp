#include "harness/data/core/worker/worker_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <utility>

#include "harness/data/core/worker/transport/parent_only_fds.h"
#include "harness/sys/pidfd.h"

namespace dlreset::data::detail {

namespace {

/// How often reap() asks waitpid() about a child it cannot wait for through a pidfd.
constexpr std::chrono::milliseconds kReapPollInterval{1};

}  // namespace

WorkerProcess::WorkerProcess(pid_t pid) : pid_(pid), pidfd_(sys::open_pidfd(pid)) {
  if (pidfd_.get() >= 0) register_parent_only_fd(pidfd_.get());
}

WorkerProcess::~WorkerProcess() { close_pidfd(); }

WorkerProcess& WorkerProcess::operator=(WorkerProcess&& other) noexcept {
  if (this != &other) {
    close_pidfd();
    pid_ = other.pid_;
    pidfd_ = std::move(other.pidfd_);
    exited_ = other.exited_;
    reaped_ = other.reaped_;
    wait_status_ = other.wait_status_;
  }
  return *this;
}

void WorkerProcess::close_pidfd() {
  if (pidfd_.get() < 0) return;
  unregister_parent_only_fd(pidfd_.get());
  pidfd_.reset();
}

bool WorkerProcess::reap(std::chrono::milliseconds timeout, bool kill_after,
                         const std::function<void(int)>& forget_pidfd) {
  if (reaped_ || pid_ <= 0) return false;
  int status = 0;
  pid_t done = 0;
  if (pidfd_.get() >= 0) {
    pollfd entry{pidfd_.get(), POLLIN, 0};
    while (::poll(&entry, 1, static_cast<int>(timeout.count())) < 0 && errno == EINTR) {
    }
    done = ::waitpid(pid_, &status, WNOHANG);
  } else {
    // No pidfd to wait on: waitpid is asked until the grace period ends, so that a worker on
    // its way out is reaped, not killed.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while ((done = ::waitpid(pid_, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(kReapPollInterval);
    }
  }
  if (done == 0 && kill_after) {
    ::kill(pid_, SIGKILL);
    while ((done = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
  }
  if (done == pid_) {
    reaped_ = true;
    wait_status_ = status;
  }
  if ((reaped_ || kill_after) && pidfd_.get() >= 0) {
    if (forget_pidfd) forget_pidfd(pidfd_.get());
    close_pidfd();
  }
  return reaped_;
}

}  // namespace dlreset::data::detail
