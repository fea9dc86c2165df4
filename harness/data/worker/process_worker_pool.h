// The process back-ends (fork and spawn): one child process and one socket per worker.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "harness/data/worker/socket_channel.h"
#include "harness/data/worker/worker_pool.h"

namespace dlreset::data {

/// The parent waits on every worker's socket with one poll(). A worker that dies closes its
/// socket, so its death is seen at once, reaped with waitpid and reported with its signal.
class ProcessWorkerPool : public WorkerPool {
 public:
  ProcessWorkerPool(StartMethod method, std::vector<WorkerLaunch> launches,
                    LifecycleHandler on_lifecycle);
  ~ProcessWorkerPool() override;

  void send(int worker_id, const Message& message) override;
  std::optional<Message> receive(std::chrono::milliseconds timeout) override;
  void shutdown(std::chrono::milliseconds grace) override;
  std::vector<std::int64_t> pids() const override;

 private:
  struct Worker {
    int id = 0;
    pid_t pid = -1;
    int pidfd = -1;  ///< Lets the parent wait for this one child's exit with a timeout.
    SocketChannel channel;
    bool reaped = false;
    int wait_status = 0;
  };

  /// Pops the next buffered data message of worker `w`, handing lifecycle reports on.
  std::optional<Message> pop_data(Worker& worker);
  /// Waits up to `timeout` for the child to exit (then kills it if `kill_after`), and reaps it.
  void reap(Worker& worker, std::chrono::milliseconds timeout, bool kill_after);
  [[noreturn]] void fail_dead(Worker& worker);
  /// One wait of receive() or shutdown(): polls the open channels (with `skip_at_eof`, only
  /// those whose worker has not closed its end) for up to `timeout_ms` and reads what came.
  struct ChannelWait {
    std::size_t channels = 0;  ///< How many were waited on; 0: none was open.
    int ready = 0;             ///< poll's result: channels that had data, 0 on a timeout, -1.
    int error = 0;             ///< errno when `ready` is -1.
  };
  ChannelWait wait_for_channels(int timeout_ms, bool skip_at_eof);
  /// Tells the lifecycle handler that `worker` was launched, as its first report.
  void report_spawn(const Worker& worker) const;
  void record(int kind, const Worker& worker) const;

  std::string loader_;
  LifecycleHandler on_lifecycle_;
  std::vector<Worker> workers_;
  std::size_t next_ = 0;  ///< Round-robin start for fairness between workers' buffers.
  bool shut_down_ = false;
};

}  // namespace dlreset::data
