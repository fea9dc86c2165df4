// Mirrors torch.utils.data.get_worker_info() (torch/utils/data/_utils/worker.py @ v1.13.1).
#include "harness/data/core/worker/worker_info.h"

#include "harness/data/core/worker/worker_endpoint.h"

namespace dlreset::data {

namespace {
/// Per thread, like PyTorch's per-process _worker_info: a worker thread of the thread back-end
/// must see its own info, not another worker's.
thread_local const WorkerInfo* current_worker_info = nullptr;
}  // namespace

const WorkerInfo* get_worker_info() { return current_worker_info; }

bool WorkerInfo::stopping() const { return endpoint != nullptr && endpoint->exit_requested(); }

void WorkerInfo::wait_until_stopping() const {
  if (endpoint != nullptr) endpoint->wait_until_exit_requested();
}

WorkerInfoScope::WorkerInfoScope(const WorkerInfo* info) : previous_(current_worker_info) {
  current_worker_info = info;
}

WorkerInfoScope::~WorkerInfoScope() { current_worker_info = previous_; }

}  // namespace dlreset::data
