#include "harness/data/core/worker/worker_pool.h"

#include <exception>
#include <iostream>
#include <string>
#include <utility>

#include "harness/data/core/worker/process_worker_pool.h"
#include "harness/data/core/worker/thread_worker_pool.h"
#include "harness/trace/event_log.h"

namespace dlreset::data::detail {

Message spawned_report(int worker_id, std::int64_t pid) {
  Message spawned;
  spawned.type = MessageType::spawned;
  spawned.worker_id = worker_id;
  spawned.pid = pid;
  spawned.time_s = trace::monotonic_now_s();
  return spawned;
}

void shutdown_in_destructor(const char* workers, const std::function<void()>& shutdown) noexcept {
  std::string why;  // a copy: the exception is gone after its catch block
  try {
    shutdown();
    return;
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "an exception that is not a std::exception";
  }
  // Worker processes set PR_SET_PDEATHSIG and abandoned threads are the program's own, so
  // nothing outlives the program; until it ends, the stragglers hold their memory.
  std::cerr << "dlreset: shutting a DataLoader's " << workers << " down failed: " << why
            << ". Some of them may run on until this program ends.\n";
}

std::unique_ptr<WorkerPool> start_worker_pool(StartMethod method, std::vector<WorkerLaunch> launches,
                                              LifecycleHandler on_lifecycle) {
  if (method == StartMethod::thread) {
    return std::make_unique<ThreadWorkerPool>(std::move(launches), std::move(on_lifecycle));
  }
  return std::make_unique<ProcessWorkerPool>(method, std::move(launches), std::move(on_lifecycle));
}

}  // namespace dlreset::data::detail
