#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "harness/data/errors.h"
#include "harness/data/worker/process_endpoint.h"
#include "harness/data/worker/process_launch.h"

namespace dlreset::data {

namespace {

[[noreturn]] void run_forked_worker(const WorkerLaunch& launch, int child_fd, pid_t parent,
                                    bool die_with_parent_thread) {
  // Die with the parent, even if it is killed with SIGKILL (where the death signal can be tied
  // to the whole parent: see forking_from_main_thread); and if it already died between fork and
  // here, leave at once.
  if (die_with_parent_thread) ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  prepare_worker_process_signals();
  // Keep stdin/out/err and this worker's socket only: a sibling's socket held open here would
  // hide that sibling's death from the parent.
  constexpr int kChannelFd = 3;
  if (child_fd != kChannelFd) {
    ::dup2(child_fd, kChannelFd);
  }
  // dup2's copy is not close-on-exec. A program the dataset starts (std::system, a decoder)
  // must not inherit the channel: if it outlived the worker it would hold the socket open and
  // hide the worker's death from the parent.
  ::fcntl(kChannelFd, F_SETFD, FD_CLOEXEC);
  ::close_range(kChannelFd + 1, ~0u, 0);
  WorkerConfig config = launch.config;
  config.in_own_process = true;
  {
    ProcessEndpoint endpoint(SocketChannel(kChannelFd), parent);
    worker_loop(endpoint, *launch.dataset, config);
  }
  ::_exit(0);
}

}  // namespace

bool forking_from_main_thread() { return ::gettid() == ::getpid(); }

pid_t launch_fork_worker(const WorkerLaunch& launch, int child_fd) {
  const pid_t parent = ::getpid();
  // Read before fork: in the child, gettid() names the child's own thread.
  const bool from_main_thread = forking_from_main_thread();
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw DataLoaderError(std::string("Cannot fork DataLoader worker ") +
                          std::to_string(launch.config.worker_id) + " of loader '" +
                          launch.config.loader + "': " + std::strerror(errno) +
                          ". Use fewer workers or start_method 'thread'.");
  }
  if (pid == 0) run_forked_worker(launch, child_fd, parent, from_main_thread);
  return pid;
}

}  // namespace dlreset::data
