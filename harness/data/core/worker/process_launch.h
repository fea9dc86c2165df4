// Starting one worker process: process_start.cpp, fork_launcher.cpp and spawn_launcher.cpp.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>

#include "harness/data/core/worker/transport/shared_slots.h"
#include "harness/data/core/worker/transport/socket_channel.h"
#include "harness/data/core/worker/transport/worker_connection.h"
#include "harness/data/core/worker/worker_pool.h"
#include "harness/data/core/worker/worker_process.h"

namespace dlreset::data::detail {

/// Most bytes of shared-memory slots one worker gets: fewer slots for large batches (a
/// 60000-sample Fashion-MNIST batch is 189 MB), but always one.
inline constexpr std::size_t kMaxSlotBytesPerWorker = std::size_t{256} << 20;

/// A process worker as the main process holds it: the child's lifecycle and the transport to it.
struct ProcessWorker {
  WorkerProcess process;
  WorkerConnection connection;
};

/// Starts worker `launch` by `method` (fork or spawn): its socket, its shared-memory slots (as
/// many as the launch asks for, within kMaxSlotBytesPerWorker), and its process. Throws
/// DataLoaderError naming the worker and the loader when one of them cannot be made; nothing it
/// made is left open then.
ProcessWorker start_process_worker(StartMethod method, const WorkerLaunch& launch);

/// Forks a worker that runs the worker loop on the inherited dataset copy. The child runs no
/// LibTorch code (a fork after LibTorch's thread pools started is unsafe for OpenMP) and
/// leaves with _exit, never through the parent's destructors. Its dataset is the parent's own
/// copy, so nothing needs to be sent to it; it inherits the mapping of its `slots` (null: none).
pid_t launch_fork_worker(const WorkerLaunch& launch, int child_fd, const std::shared_ptr<SharedSlots>& slots);

/// Starts a fresh run of this program (/proc/self/exe) in worker mode and sends it its set-up:
/// the program loads, rebuilds its dataset from spec() and loads that again, as a Python
/// worker started with spawn re-imports everything. The set-up goes over `parent_end`; the
/// memfd of its `slots` (null: none) is inherited as descriptor 4, and mapped by the worker.
pid_t launch_spawn_worker(const WorkerLaunch& launch, int child_fd, SocketChannel& parent_end,
                          const std::shared_ptr<SharedSlots>& slots);

/// Whether the calling thread is the process's main thread. A worker started from it is given
/// PR_SET_PDEATHSIG, which the kernel fires when the thread that forked exits, not the process:
/// from any other thread (a loader first iterated from a short-lived thread) that would kill
/// workers still in use. Those workers rely instead on what fires only when the whole process
/// is gone: their channel's end of file, and the check that their parent is still there.
bool forking_from_main_thread();

/// The environment variable that puts a program into worker mode; spawn_main.cpp reads it.
const char* spawn_worker_fd_variable();

}  // namespace dlreset::data::detail
