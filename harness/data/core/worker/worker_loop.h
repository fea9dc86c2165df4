// Mirrors torch/utils/data/_utils/worker.py @ v1.13.1: the loop every worker runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "harness/data/core/worker/worker_endpoint.h"

namespace dlreset::data {
class Dataset;
}  // namespace dlreset::data

namespace dlreset::data::detail {

/// A worker's identity and set-up, the same for every back-end.
struct WorkerConfig {
  int worker_id = 0;
  int num_workers = 1;
  std::uint64_t seed = 0;  ///< base_seed + worker_id
  std::string loader;
  bool in_own_process = false;
  /// Called once, in the worker, before its first task (thread and fork back-ends).
  std::function<void(int worker_id)> worker_init_fn;
};

/// Runs until told to exit (or until the parent is gone): reports `started`, then answers
/// tasks with batches (or errors), resumes with acks, reports the dataset's load the first
/// time a task triggers it, and reports `exiting` last. Never throws: an exception from the
/// dataset or from worker_init_fn goes back to the parent as an `error` message.
void worker_loop(WorkerEndpoint& endpoint, Dataset& dataset, const WorkerConfig& config);

}  // namespace dlreset::data::detail
