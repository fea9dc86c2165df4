// Every live process worker of every loader, watched as one: torch's `_worker_pids` and the
// SIGCHLD handler over them (torch/utils/data/_utils/signal_handling.py @ v1.13.1), without a
// signal handler.
#pragma once

#include <sys/epoll.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "harness/sys/unique_fd.h"

namespace dlreset::data::detail {

/// How often, at most, a batch request looks for a dead worker of another loader when nothing
/// woke it. A main thread that waits for a batch is woken at once by the death (the watch's
/// descriptor is in every process pool's wait set); one that computes between batches finds it
/// at its next batch request, and looking at every request would cost a system call a batch
/// (about 1% of a 40 µs batch of the loader benchmarks). 100 ms, as kInterruptCheckInterval:
/// a death stops the run well within a second, and it costs ten looks a second at most.
inline constexpr std::chrono::milliseconds kWorkerDeathCheckInterval{100};

/// Torch 1.13 registers the pids of every live worker of every multiprocessing iterator, and
/// its SIGCHLD handler raises a death in whatever the main thread does, even in another
/// loader's loop. dlreset keeps each live worker's pidfd in one epoll set instead: a pool adds
/// its workers when it starts them and takes them out before it tells them to exit (so a
/// deliberate shutdown is never a death), and the set's descriptor sits in every process
/// pool's wait set, so a death wakes whichever loader the main thread is waiting on. A death
/// the watch finds is raised once, as WorkerDiedError naming the dead worker's loader, id, pid
/// and signal, by the next batch request of any loader but the dead worker's own, whose pool
/// raises it at its next read (with what the worker sent before it died delivered first).
///
/// One of the pieces of process-wide mutable state (docs/design.md §4): a death must reach
/// every loader of the process. Thread-safe: pin-memory threads and loaders on other threads
/// use it too.
class WorkerDeathWatch {
 public:
  /// The process's watch, never destroyed: a pool may outlive static destructors.
  static WorkerDeathWatch& global();

  /// A process pool holds the watch while it lives. Returns the descriptor to wait on, readable
  /// while a watched worker has died and no look has found it yet. The epoll set exists only
  /// while a pool does, so a program without process workers holds no descriptor for it.
  /// Throws DataLoaderError, naming `loader`, when the process is out of descriptors.
  int hold(const std::string& loader);
  void let_go();

  /// Watches worker `worker_id` (pid `pid`) of `loader`, owned by the pool `owner`, through its
  /// `pidfd`. Without one (before Linux 5.3, under valgrind) nothing is watched, and only its
  /// own loader sees its death.
  void watch(const void* owner, const std::string& loader, int worker_id, pid_t pid, int pidfd);
  /// Stops watching the worker of `pidfd`: before its pool tells it to exit, and before the
  /// pool reaps it (a reaped pid could be anybody's).
  void forget(int pidfd);

  /// Looks for dead workers at most once per kWorkerDeathCheckInterval (a clock read otherwise),
  /// and says whether a death is waiting to be raised for any loader but `except_owner`'s.
  bool has_news(const void* except_owner);
  /// Looks now: what a pool does when the watch's descriptor woke it.
  void look_now();
  /// Throws WorkerDiedError for the first death found and not yet raised, of a worker that
  /// `except_owner` does not own, and marks it raised.
  void throw_news(const void* except_owner);

  /// How many deaths the watch has found since the program started, after a look now. A test
  /// waits on it: once it counts a death, the next batch request of another loader raises it.
  std::int64_t deaths_seen();
  /// How many workers are watched now.
  int watched() const { return watched_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    const void* owner = nullptr;
    std::string loader;
    int worker_id = 0;
    pid_t pid = -1;
    int pidfd = -1;
    bool dead = false;    ///< Found dead by a look; its pidfd is out of the epoll set.
    bool raised = false;  ///< Raised by some loader's request.
    int wait_status = 0;  ///< As waitpid would give it, the process left unreaped for its pool.
  };

  WorkerDeathWatch() = default;
  /// In a process forked from the one that made the epoll set (a program's own fork, not a
  /// worker, which closes it), the set and the entries are the parent's: start afresh, without
  /// touching the parent's set. Called with the lock held.
  void adopt_if_forked();
  /// look_now() with the lock held.
  void look_locked();

  std::mutex mutex_;
  int holders_ = 0;
  sys::UniqueFd epoll_fd_;
  pid_t made_by_ = 0;  ///< The process that made epoll_fd_.
  std::vector<Entry> entries_;
  std::vector<epoll_event> events_;  ///< Sized to the entries, so that a look allocates nothing.
  std::int64_t deaths_seen_ = 0;
  /// Read without the lock on every batch request: nothing to look at while no worker is
  /// watched, nothing to raise while no death is waiting, and no look before `next_look_ns_`.
  std::atomic<int> watched_{0};
  std::atomic<int> waiting_{0};  ///< Deaths found and not yet raised.
  std::atomic<std::int64_t> next_look_ns_{0};
};

/// The check of every batch request, of every loader and back-end: throws WorkerDiedError when
/// a worker of any other loader than the pool `except_owner` (null: none) has died. An atomic
/// load while no process worker is watched; a clock read otherwise, and a look (one system
/// call) once per kWorkerDeathCheckInterval.
void throw_if_a_worker_died(const void* except_owner);

}  // namespace dlreset::data::detail
