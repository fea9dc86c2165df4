#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/data/core/datasets/dataset.h"
#include "harness/data/core/errors.h"
#include "harness/data/core/worker/process_launch.h"
#include "harness/sys/child_process.h"

namespace dlreset::data::detail {

namespace {

/// Where a spawned worker finds its channel, its shared-memory slots and their two doorbells
/// after the exec.
constexpr int kChannelFd = 3;
constexpr int kSlotsFd = 4;
constexpr int kTaskBellFd = 5;
constexpr int kAnswerBellFd = 6;

Message setup_message(const WorkerLaunch& launch, const std::shared_ptr<SharedSlots>& slots) {
  const WorkerConfig& config = launch.config;
  nlohmann::json setup = {{"worker_id", config.worker_id}, {"num_workers", config.num_workers},
                          {"seed", config.seed},           {"loader", config.loader},
                          {"parent_pid", ::getpid()},      {"dataset", launch.dataset->spec()}};
  if (slots) {
    setup["slots"] = {{"fd", kSlotsFd},
                      {"count", slots->count()},
                      {"slot_bytes", slots->slot_bytes()},
                      {"task_bell", kTaskBellFd},
                      {"answer_bell", kAnswerBellFd}};
  }
  Message message;
  message.type = MessageType::setup;
  message.worker_id = config.worker_id;
  message.text = setup.dump();
  return message;
}

}  // namespace

pid_t launch_spawn_worker(const WorkerLaunch& launch, int child_fd, SocketChannel& parent_end,
                          const std::shared_ptr<SharedSlots>& slots) {
  // Between fork and exec a child of a multi-threaded process may only make async-signal-safe
  // calls, so argv and the environment are built here, before the fork.
  const std::string program = program_invocation_name;
  const std::string role = launch.config.loader + ":" + std::to_string(launch.config.worker_id);
  std::vector<std::string> arguments = {program, "--dlreset-worker", role};
  std::vector<std::string> environment =
      sys::environment_with({std::string(spawn_worker_fd_variable()) + "=" + std::to_string(kChannelFd)});
  const std::vector<char*> argv = sys::exec_pointers(arguments);
  const std::vector<char*> envp = sys::exec_pointers(environment);

  const pid_t parent = ::getpid();
  const bool from_main_thread = forking_from_main_thread();
  const int slot_fd = slots ? slots->fd() : -1;
  const int task_bell = slots ? slots->task_bell_fd() : -1;
  const int answer_bell = slots ? slots->answer_bell_fd() : -1;
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw DataLoaderError(std::string("Cannot start DataLoader worker ") + std::to_string(launch.config.worker_id) +
                          " of loader '" + launch.config.loader + "': fork failed: " + std::strerror(errno) + ".");
  }
  if (pid == 0) {
    // The death signal survives execve.
    const bool parent_alive = from_main_thread ? sys::die_with_parent(SIGKILL, parent) : ::getppid() == parent;
    if (!parent_alive) ::_exit(1);
    // Copies above all targets first, so that no dup2 below can overwrite another descriptor;
    // they are close-on-exec, and the dup2 copies are not, so only 3 to 6 stay.
    const int channel = ::fcntl(child_fd, F_DUPFD_CLOEXEC, 10);
    if (channel < 0 || ::dup2(channel, kChannelFd) < 0) ::_exit(127);
    if (slot_fd >= 0) {
      const int slots_fd = ::fcntl(slot_fd, F_DUPFD_CLOEXEC, 10);
      const int task_bell_fd = ::fcntl(task_bell, F_DUPFD_CLOEXEC, 10);
      const int answer_bell_fd = ::fcntl(answer_bell, F_DUPFD_CLOEXEC, 10);
      if (slots_fd < 0 || task_bell_fd < 0 || answer_bell_fd < 0 || ::dup2(slots_fd, kSlotsFd) < 0 ||
          ::dup2(task_bell_fd, kTaskBellFd) < 0 || ::dup2(answer_bell_fd, kAnswerBellFd) < 0) {
        ::_exit(127);
      }
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve("/proc/self/exe", argv.data(), envp.data());
    const char failure[] = "dlreset: could not start a spawned DataLoader worker: execve failed\n";
    [[maybe_unused]] const ssize_t written = ::write(2, failure, sizeof failure - 1);
    ::_exit(127);
  }
  // A worker that dies before reading this is noticed by the pool as end-of-file.
  parent_end.send(setup_message(launch, slots));
  return pid;
}

}  // namespace dlreset::data::detail
