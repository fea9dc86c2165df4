#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "harness/data/core/datasets/dataset.h"
#include "harness/data/core/errors.h"
#include "harness/data/core/worker/process_launch.h"
#include "harness/data/core/worker/transport/parent_only_fds.h"
#include "harness/sys/unique_fd.h"

namespace dlreset::data::detail {

namespace {

/// Room for a few whole batches (200 KB each at batch size 64) in flight, so a worker hands its
/// batch over in one send instead of waking the parent for every slice of the default buffer.
/// The kernel caps it at net.core.wmem_max; below that it is only smaller.
constexpr int kSocketBufferBytes = 1 << 20;

/// The slots of one worker: as many as its launch asks for, within kMaxSlotBytesPerWorker.
std::shared_ptr<SharedSlots> make_slots(const WorkerLaunch& launch) {
  if (launch.slot_count <= 0 || launch.batch_samples <= 0) return nullptr;
  constexpr std::size_t kPage = 4096;
  const SlotLayout layout{launch.batch_samples, launch.dataset->sample_numel()};
  const std::size_t slot_bytes = (layout.bytes() + kPage - 1) / kPage * kPage;
  const std::size_t fit = kMaxSlotBytesPerWorker / slot_bytes;
  const int count = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(fit, launch.slot_count)));
  return SharedSlots::create(count, slot_bytes, launch.config.loader);
}

/// The new worker's end of its socket while the main process holds it: on the parent-only list
/// (parent_only_fds.h), so that a loader forking on another thread meanwhile does not pass it
/// on to its own worker, and closed once the worker has its copy.
class ChildEnd {
 public:
  explicit ChildEnd(int fd) : fd_(fd) { register_parent_only_fd(fd); }
  ~ChildEnd() { unregister_parent_only_fd(fd_.get()); }
  ChildEnd(const ChildEnd&) = delete;
  ChildEnd& operator=(const ChildEnd&) = delete;
  int get() const { return fd_.get(); }

 private:
  sys::UniqueFd fd_;
};

}  // namespace

ProcessWorker start_process_worker(StartMethod method, const WorkerLaunch& launch) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw DataLoaderError("Cannot create the socket for DataLoader worker " + std::to_string(launch.config.worker_id) +
                          " of loader '" + launch.config.loader + "': " + std::strerror(errno) +
                          ". Raise the limit on open files (ulimit -n).");
  }
  SocketChannel channel(fds[0]);
  sys::UniqueFd child_end(fds[1]);
  const int buffer_bytes = kSocketBufferBytes;
  ::setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
  ::setsockopt(fds[0], SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
  std::shared_ptr<SharedSlots> slots = make_slots(launch);
  channel.mark_parent_only();
  pid_t pid = -1;
  {
    const ChildEnd handed_over(child_end.release());
    pid = method == StartMethod::spawn ? launch_spawn_worker(launch, handed_over.get(), channel, slots)
                                       : launch_fork_worker(launch, handed_over.get(), slots);
  }
  ProcessWorker worker;
  worker.process = WorkerProcess(pid);
  worker.connection =
      WorkerConnection(launch.config.loader, launch.config.worker_id, pid, std::move(channel), std::move(slots));
  return worker;
}

}  // namespace dlreset::data::detail
