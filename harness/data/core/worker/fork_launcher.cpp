#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/data/core/errors.h"
#include "harness/data/core/worker/process_endpoint.h"
#include "harness/data/core/worker/process_launch.h"
#include "harness/data/core/worker/transport/parent_only_fds.h"
#include "harness/sys/child_process.h"
#include "harness/sys/unique_fd.h"

namespace dlreset::data::detail {

namespace {

/// What the main process holds for all its workers, copied before the fork.
struct ParentOnly {
  std::vector<int> fds;
  std::vector<std::pair<void*, std::size_t>> mappings;
};

[[noreturn]] void run_forked_worker(const WorkerLaunch& launch, int child_fd, pid_t parent, bool die_with_parent_thread,
                                    const ParentOnly& parent_only, const std::shared_ptr<SharedSlots>& slots) {
  // Die with the parent, even if it is killed with SIGKILL (where the death signal can be tied
  // to the whole parent: see forking_from_main_thread); and if it already died between fork and
  // here, leave at once.
  const bool parent_alive = die_with_parent_thread ? sys::die_with_parent(SIGKILL, parent) : ::getppid() == parent;
  if (!parent_alive) ::_exit(1);
  prepare_worker_process_signals();
  // Keep every descriptor the worker inherited, as PyTorch's fork workers do (a dataset's file,
  // database handle or log), but the main process's ends of the workers' channels, and any
  // other worker's end: a channel is at end of file only once every copy of one end is closed,
  // so a copy kept here would hide from the process at the other end that its peer died. The
  // channel itself is close-on-exec (SOCK_CLOEXEC): a program the dataset starts must not
  // inherit it, or, if it outlived the worker, it would hold the socket open after the worker's
  // death.
  // Its own slots' doorbells stay too.
  const auto own = [&](int fd) {
    return fd == child_fd || (slots && (fd == slots->task_bell_fd() || fd == slots->answer_bell_fd()));
  };
  for (const int fd : parent_only.fds) {
    // The child's copy, owned only to be closed.
    if (!own(fd)) sys::UniqueFd(fd).reset();
  }
  // Its own slots stay mapped (inherited); the other workers' are theirs alone.
  for (const auto& [base, bytes] : parent_only.mappings) {
    if (!slots || base != slots->mapping()) ::munmap(base, bytes);
  }
  WorkerConfig config = launch.config;
  config.in_own_process = true;
  {
    ProcessEndpoint endpoint(SocketChannel(child_fd), parent, slots);
    worker_loop(endpoint, *launch.dataset, config);
  }
  ::_exit(0);
}

}  // namespace

bool forking_from_main_thread() { return ::gettid() == ::getpid(); }

pid_t launch_fork_worker(const WorkerLaunch& launch, int child_fd, const std::shared_ptr<SharedSlots>& slots) {
  const pid_t parent = ::getpid();
  // Read before fork: in the child, gettid() names the child's own thread.
  const bool from_main_thread = forking_from_main_thread();
  // Copied before fork: the child must not take the registry's lock, which another thread may
  // hold at the moment of the fork.
  const ParentOnly parent_only{parent_only_fds(), parent_only_mappings()};
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw DataLoaderError(std::string("Cannot fork DataLoader worker ") + std::to_string(launch.config.worker_id) +
                          " of loader '" + launch.config.loader + "': " + std::strerror(errno) +
                          ". Use fewer workers or start_method 'thread'.");
  }
  if (pid == 0) run_forked_worker(launch, child_fd, parent, from_main_thread, parent_only, slots);
  return pid;
}

}  // namespace dlreset::data::detail
