// The thread back-end: a thread per worker, as in LibTorch's own C++ DataLoader.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/data/core/worker/worker_pool.h"

namespace dlreset::data::detail {

/// Each worker thread works on its own dataset copy, so a re-created worker reloads its data
/// just as a re-created worker process does. Threads cannot be killed: a worker that does not
/// exit within the grace period is abandoned (detached) with a warning, never joined forever.
// NOLINTNEXTLINE(cppcoreguidelines-special-member-functions): WorkerPool deletes copying, and moving with it.
class ThreadWorkerPool final : public WorkerPool {
 public:
  ThreadWorkerPool(std::vector<WorkerLaunch> launches, LifecycleHandler on_lifecycle);
  ~ThreadWorkerPool() override;

  void send(int worker_id, const Message& message) override;
  std::optional<Message> receive(std::chrono::milliseconds timeout) override;
  void shutdown(std::chrono::milliseconds grace) override;
  std::vector<std::int64_t> pids() const override;
  void wake() override;
  TransportStats stats() const override;

  struct Shared;
  struct WorkerState;

 private:
  /// Hands lifecycle reports to the handler; true if the message was one.
  bool consume_lifecycle(const Message& message);

  std::string loader_;
  LifecycleHandler on_lifecycle_;
  /// Shared with the threads, so an abandoned thread never touches freed memory.
  std::shared_ptr<Shared> shared_;
  std::vector<std::shared_ptr<WorkerState>> workers_;
  std::vector<std::thread> threads_;
  std::vector<bool> exited_;
  bool shut_down_ = false;
};

}  // namespace dlreset::data::detail
