#include "harness/data/core/worker/worker_death_watch.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "harness/data/core/errors.h"
#include "harness/data/core/worker/transport/parent_only_fds.h"

namespace dlreset::data::detail {

namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The wait status waitpid would give for what waitid(WNOWAIT) says, so that WorkerDiedError
/// reads the same whoever found the death.
int wait_status_of(const siginfo_t& info) {
  switch (info.si_code) {
    case CLD_EXITED: return (info.si_status & 0xff) << 8;
    case CLD_KILLED: return info.si_status & 0x7f;
    case CLD_DUMPED: return (info.si_status & 0x7f) | 0x80;
    default: return 0;
  }
}

}  // namespace

WorkerDeathWatch& WorkerDeathWatch::global() {
  // Leaked on purpose: a pool destroyed by another static's destructor still finds it.
  static WorkerDeathWatch* const instance = new WorkerDeathWatch();
  return *instance;
}

void WorkerDeathWatch::adopt_if_forked() {
  if (epoll_fd_.get() < 0 || made_by_ == ::getpid()) return;
  // Our copy of the parent's descriptor may go, but no change may reach the parent's set.
  unregister_parent_only_fd(epoll_fd_.get());
  epoll_fd_.reset();
  holders_ = 0;
  entries_.clear();
  watched_.store(0);
  waiting_.store(0);
}

int WorkerDeathWatch::hold(const std::string& loader) {
  const std::lock_guard<std::mutex> lock(mutex_);
  adopt_if_forked();
  if (epoll_fd_.get() < 0) {
    epoll_fd_.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (epoll_fd_.get() < 0) {
      throw DataLoaderError("Cannot create the epoll descriptor that watches the DataLoader workers of loader '" +
                            loader + "': " + std::strerror(errno) + ". Raise the limit on open files (ulimit -n).");
    }
    made_by_ = ::getpid();
    register_parent_only_fd(epoll_fd_.get());
  }
  ++holders_;
  return epoll_fd_.get();
}

void WorkerDeathWatch::let_go() {
  const std::lock_guard<std::mutex> lock(mutex_);
  adopt_if_forked();
  if (holders_ == 0 || --holders_ > 0) return;
  // The last pool is gone, and with it every entry (each pool forgets its workers at shutdown).
  unregister_parent_only_fd(epoll_fd_.get());
  epoll_fd_.reset();
  entries_.clear();
  watched_.store(0);
  waiting_.store(0);
}

void WorkerDeathWatch::watch(const void* owner, const std::string& loader, int worker_id, pid_t pid, int pidfd) {
  if (pidfd < 0) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  adopt_if_forked();
  if (epoll_fd_.get() < 0) return;  // held by no pool: a bug, but nothing to wait on
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = pidfd;
  if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, pidfd, &event) != 0) {
    throw DataLoaderError("Cannot watch DataLoader worker " + std::to_string(worker_id) + " (pid " +
                          std::to_string(pid) + ") of loader '" + loader + "' with epoll: " + std::strerror(errno) +
                          ". Raise the limit on open files (ulimit -n).");
  }
  entries_.push_back(Entry{owner, loader, worker_id, pid, pidfd, /*dead=*/false, /*raised=*/false, /*wait_status=*/0});
  events_.resize(entries_.size());
  watched_.store(static_cast<int>(entries_.size()));
}

void WorkerDeathWatch::forget(int pidfd) {
  if (pidfd < 0) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  adopt_if_forked();
  const auto it = std::find_if(entries_.begin(), entries_.end(), [pidfd](const Entry& e) { return e.pidfd == pidfd; });
  if (it == entries_.end()) return;
  if (!it->dead) ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, pidfd, nullptr);
  if (it->dead && !it->raised) waiting_.fetch_sub(1);
  entries_.erase(it);
  watched_.store(static_cast<int>(entries_.size()));
}

void WorkerDeathWatch::look_locked() {
  adopt_if_forked();
  if (epoll_fd_.get() < 0 || events_.empty()) return;
  int count = 0;
  while ((count = ::epoll_wait(epoll_fd_.get(), events_.data(), static_cast<int>(events_.size()), 0)) < 0 &&
         errno == EINTR) {
  }
  for (int e = 0; e < count; ++e) {
    const int pidfd = events_[static_cast<std::size_t>(e)].data.fd;
    const auto it =
        std::find_if(entries_.begin(), entries_.end(), [pidfd](const Entry& x) { return x.pidfd == pidfd; });
    if (it == entries_.end() || it->dead) continue;
    // Readable for good now: out of the set, or every wait on it would return at once.
    ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, pidfd, nullptr);
    it->dead = true;
    // WNOWAIT: the status is read and the process left for its pool to reap. Its pool forgets
    // it before reaping, under this lock, so it is still there.
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(it->pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == it->pid) {
      it->wait_status = wait_status_of(info);
    }
    ++deaths_seen_;
    waiting_.fetch_add(1);
  }
}

void WorkerDeathWatch::look_now() {
  const std::lock_guard<std::mutex> lock(mutex_);
  look_locked();
}

bool WorkerDeathWatch::has_news(const void* except_owner) {
  if (watched_.load(std::memory_order_relaxed) == 0) return false;
  const auto news_for = [this, except_owner] {
    if (waiting_.load(std::memory_order_acquire) == 0) return false;
    const std::lock_guard<std::mutex> lock(mutex_);
    return std::any_of(entries_.begin(), entries_.end(),
                       [except_owner](const Entry& e) { return e.dead && !e.raised && e.owner != except_owner; });
  };
  if (news_for()) return true;
  const std::int64_t now = steady_ns();
  std::int64_t next = next_look_ns_.load(std::memory_order_relaxed);
  if (now < next) return false;
  const std::int64_t interval = std::chrono::nanoseconds(kWorkerDeathCheckInterval).count();
  // One thread looks; the others go on.
  if (!next_look_ns_.compare_exchange_strong(next, now + interval, std::memory_order_relaxed)) return false;
  look_now();
  return news_for();
}

void WorkerDeathWatch::throw_news(const void* except_owner) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (Entry& entry : entries_) {
    if (!entry.dead || entry.raised || entry.owner == except_owner) continue;
    entry.raised = true;
    waiting_.fetch_sub(1);
    throw WorkerDiedError(entry.loader, entry.worker_id, entry.pid, entry.wait_status);
  }
}

std::int64_t WorkerDeathWatch::deaths_seen() {
  const std::lock_guard<std::mutex> lock(mutex_);
  look_locked();
  return deaths_seen_;
}

void throw_if_a_worker_died(const void* except_owner) {
  WorkerDeathWatch& watch = WorkerDeathWatch::global();
  if (watch.has_news(except_owner)) watch.throw_news(except_owner);
}

}  // namespace dlreset::data::detail
