// Mirrors torch.utils.data.get_worker_info() (torch/utils/data/_utils/worker.py @ v1.13.1).
#pragma once

#include <cstdint>
#include <string>

namespace dlreset::data {

class Dataset;
namespace detail {
class WorkerEndpoint;  // worker_endpoint.h: dlreset's own, not installed.
}  // namespace detail

/// What a worker knows about itself. Null outside a worker (`get_worker_info()`).
struct WorkerInfo {
  int id = 0;
  int num_workers = 0;
  /// base_seed + id, as in PyTorch; stays the same across epochs of a persistent worker.
  std::uint64_t seed = 0;
  std::string loader;
  Dataset* dataset = nullptr;
  /// True for fork and spawn workers: they can be killed without killing the main process.
  bool in_own_process = false;
  /// The worker's side of its channel to the main process, which stopping() asks; set by the
  /// worker loop.
  detail::WorkerEndpoint* endpoint = nullptr;

  /// Whether the loader has told this worker to stop (its workers are shutting down, or the
  /// main process is gone). A dataset whose sample takes long (a download, a slow disk) may ask
  /// between pieces of work and give up: what it would return is thrown away. Not in torch, whose
  /// workers are killed instead; a thread worker cannot be, so this is how it ends in time.
  bool stopping() const;
  /// Blocks until the loader tells this worker to stop: for a dataset that waits on something
  /// only a stop ends.
  void wait_until_stopping() const;
};

/// The calling worker's info, or null in the main process (or any non-worker thread).
const WorkerInfo* get_worker_info();

/// Installs `info` for the calling thread while in scope (the worker loop does this).
class WorkerInfoScope {
 public:
  explicit WorkerInfoScope(const WorkerInfo* info);
  ~WorkerInfoScope();
  WorkerInfoScope(const WorkerInfoScope&) = delete;
  WorkerInfoScope& operator=(const WorkerInfoScope&) = delete;

 private:
  const WorkerInfo* previous_;
};

}  // namespace dlreset::data
