// The entry of a spawned worker: a program linked with dlreset's data layer becomes a worker
// when started with DLRESET_SPAWN_WORKER_FD set, before its own main() runs.
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "harness/data/core/datasets/dataset.h"
#include "harness/data/core/worker/process_endpoint.h"
#include "harness/data/core/worker/process_launch.h"

namespace dlreset::data::detail {

const char* spawn_worker_fd_variable() { return "DLRESET_SPAWN_WORKER_FD"; }

namespace {

/// Stands in for a dataset the worker could not rebuild: every fetch reports why, so the
/// error reaches the main process as a WorkerError with the original message.
class UnavailableDataset : public Dataset {
 public:
  explicit UnavailableDataset(std::string why) : why_(std::move(why)) {}
  std::int64_t size() const override { return 0; }
  SampleShape sample_shape() const override { return {1}; }
  std::int64_t get(std::int64_t, float*) override { throw std::runtime_error(why_); }
  std::unique_ptr<Dataset> clone() const override { return std::make_unique<UnavailableDataset>(why_); }
  std::string spec() const override { return "{}"; }

 private:
  std::string why_;
};

void write_stderr(const std::string& text) {
  [[maybe_unused]] const ssize_t written = ::write(2, text.data(), text.size());
}

int run_spawned_worker(int fd) {
  prepare_worker_process_signals();
  // The channel had to survive this program's exec; nothing this worker starts may inherit it,
  // or a program that outlived the worker would hide its death (see the fork launcher).
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  SocketChannel channel(fd);
  // The set-up is the first message; the parent sends it right after starting us.
  std::optional<Message> setup;
  while (!(setup = channel.pop())) {
    if (channel.at_eof() || !channel.wait_readable(60'000)) {
      write_stderr("dlreset: spawned DataLoader worker got no set-up from its parent\n");
      return 1;
    }
    channel.read_available();
  }
  if (setup->type != MessageType::setup) {
    write_stderr("dlreset: spawned DataLoader worker got a message before its set-up\n");
    return 1;
  }
  const nlohmann::json config_json = nlohmann::json::parse(setup->text);
  WorkerConfig config;
  config.worker_id = config_json.at("worker_id").get<int>();
  config.num_workers = config_json.at("num_workers").get<int>();
  config.seed = config_json.at("seed").get<std::uint64_t>();
  config.loader = config_json.at("loader").get<std::string>();
  config.in_own_process = true;
  const auto parent = static_cast<pid_t>(config_json.at("parent_pid").get<std::int64_t>());
  if (::getppid() != parent) return 1;

  std::unique_ptr<Dataset> dataset;
  try {
    dataset = make_dataset(config_json.at("dataset").get<std::string>());
  } catch (const std::exception& e) {
    dataset = std::make_unique<UnavailableDataset>(std::string("the spawned worker could not rebuild its dataset: ") +
                                                   e.what());
  }
  std::shared_ptr<SharedSlots> slots;
  if (config_json.contains("slots")) {
    const nlohmann::json& plan = config_json.at("slots");
    slots = SharedSlots::attach(plan.at("fd").get<int>(), plan.at("count").get<int>(),
                                plan.at("slot_bytes").get<std::size_t>(), plan.at("task_bell").get<int>(),
                                plan.at("answer_bell").get<int>());
  }
  ProcessEndpoint endpoint(std::move(channel), parent, std::move(slots));
  worker_loop(endpoint, *dataset, config);
  return 0;
}

/// Runs before main(): a spawned worker must never run the host program's own main (a test
/// binary would run its tests again). Exits with _exit so no static destructor of the host
/// program runs in the worker.
__attribute__((constructor)) void enter_spawned_worker_mode() {
  const char* fd_text = std::getenv(spawn_worker_fd_variable());
  if (fd_text == nullptr) return;
  char* end = nullptr;
  const long fd_number = std::strtol(fd_text, &end, 10);
  if (end == fd_text || *end != '\0' || fd_number < 0 || fd_number > INT_MAX) {
    // Only a launcher sets it; one set by hand would make this program a worker with no parent.
    write_stderr(std::string("dlreset: ") + spawn_worker_fd_variable() + " is '" + fd_text +
                 "', not a descriptor number; dlreset sets it only for a worker it spawns, so unset it.\n");
    ::_exit(1);
  }
  const int fd = static_cast<int>(fd_number);
  ::unsetenv(spawn_worker_fd_variable());
  int status = 1;
  try {
    status = run_spawned_worker(fd);
  } catch (const std::exception& e) {
    write_stderr(std::string("dlreset: spawned DataLoader worker failed: ") + e.what() + "\n");
  }
  ::_exit(status);
}

}  // namespace

}  // namespace dlreset::data::detail
