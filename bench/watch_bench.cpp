// What `dlreset watch` costs: the watcher's own CPU, the time of the program it watches, and what
// the Python hook adds to a batch and to a Python start.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/benches.h"
#include "harness/sys/clock.h"
#include "harness/sys/own_process.h"
#include "watch/hook/hook_channel.h"

namespace dlreset::bench {

namespace {

enum class Watch { unwatched, connector, poll, connector_no_memory };

/// A real-torch loop with persistent workers: 2 workers, 3 epochs of 20,000 samples, about
/// 2 s of training on two cores after the interpreter's start.
std::vector<std::string> program(const std::string& time_file) {
  return {"/usr/bin/python3", std::string(DLRESET_SOURCE_DIR) + "/tests/watch/train_loop.py",
          "--workers",        "2",
          "--epochs",         "3",
          "--samples",        "20000",
          "--time-file",      time_file};
}

/// Runs `args` to its end, its output discarded; `extra_environment` ("NAME=value") replaces
/// those variables. Its exit status, 128 + N for signal N, -1 if it could not start.
int run(const std::vector<std::string>& args, const std::vector<std::string>& extra_environment = {}) {
  std::vector<std::string> environment;
  environment.reserve(extra_environment.size() + 64);
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    bool replaced = false;
    for (const std::string& extra : extra_environment) {
      replaced |= text.compare(0, extra.find('=') + 1, extra, 0, extra.find('=') + 1) == 0;
    }
    if (!replaced) environment.push_back(text);
  }
  environment.insert(environment.end(), extra_environment.begin(), extra_environment.end());
  std::vector<char*> envp;
  envp.reserve(environment.size() + 1);
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The program's and the watcher's output would drown the benchmark's table.
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// watch:0 runs the program alone, watch:1 under `dlreset watch` with the events connector,
/// watch:2 polling every 5 ms, watch:3 with the connector and no memory sampling
/// (--memory-interval 0): watch:1 against it is what the sampling costs. The time of an iteration is the program's own
/// (from its loader's creation to the end of training, which it writes to a file): the watcher's start-up is not the
/// program's slowdown. Counters: the watcher's share of one core over the watch, and the share its memory reads took
/// (the report's memory.read_cpu_s).
void BM_WatchedProgram(benchmark::State& state) {
  const auto watch = static_cast<Watch>(state.range(0));
  const std::string dir =
      std::filesystem::temp_directory_path() / ("dlreset-watch-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string time_file = dir + "/time";
  const std::string json_file = dir + "/watch.json";
  const std::string dlreset = std::filesystem::path(sys::own_binary_dir()) / "dlreset";
  double watcher_cpu_s = 0.0;
  double memory_cpu_s = 0.0;
  double watched_s = 0.0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): Google Benchmark's loop variable
    std::vector<std::string> args;
    if (watch != Watch::unwatched) {
      args = {dlreset, "watch", "--mode", watch == Watch::poll ? "poll" : "connector", "--json", json_file};
      if (watch == Watch::connector_no_memory) args.insert(args.end(), {"--memory-interval", "0"});
      args.emplace_back("--");
    }
    for (std::string& arg : program(time_file)) args.push_back(std::move(arg));
    if (run(args) != 0) {
      state.SkipWithError("the watched program failed; run it by hand to see why");
      break;
    }
    double seconds = 0.0;
    std::ifstream(time_file) >> seconds;
    state.SetIterationTime(seconds);
    if (watch != Watch::unwatched) {
      const nlohmann::json report = nlohmann::json::parse(std::ifstream(json_file));
      watcher_cpu_s += report["watcher_cpu_s"].get<double>();
      memory_cpu_s += report["memory"]["read_cpu_s"].get<double>();
      watched_s += report["duration_s"].get<double>();
    }
  }
  if (watched_s > 0) {
    state.counters["watcher_cpu_pct"] = 100.0 * watcher_cpu_s / watched_s;
    state.counters["memory_read_pct"] = 100.0 * memory_cpu_s / watched_s;
  }
  std::filesystem::remove_all(dir);
}

/// The floor under polling: what any process pays to wake every 5 ms (read:0), and to read
/// /proc/loadavg once a wake-up as the watcher's look does when nothing was created (read:1).
/// 800 wake-ups, 4 s; the counter is the share of one core.
void BM_PollFloor(benchmark::State& state) {
  const bool read = state.range(0) == 1;
  const int loadavg = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  char buffer[256];
  double cpu_s = 0.0;
  double wall_s = 0.0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): Google Benchmark's loop variable
    const double before = sys::own_usage().cpu_s;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 800; ++i) {
      ::poll(nullptr, 0, 5);
      if (read) benchmark::DoNotOptimize(::pread(loadavg, buffer, sizeof buffer, 0));
    }
    cpu_s += sys::own_usage().cpu_s - before;
    wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  ::close(loadavg);
  state.counters["cpu_pct"] = 100.0 * cpu_s / wall_s;
}

/// The Python hook alone, without the watcher: the hook's folder on PYTHONPATH and a socket this
/// benchmark reads, as the watcher gives them.
struct Hook {
  std::unique_ptr<watch::HookChannel> channel;
  std::vector<std::string> environment;
  int events = 0;

  bool open(benchmark::State& state) {
    const std::optional<std::string> dir = watch::find_hook_dir();
    std::string why_not;
    channel = dir ? watch::HookChannel::open(why_not) : nullptr;
    if (!dir || !channel) {
      state.SkipWithError(dir ? ("the hook's socket cannot be opened: " + why_not).c_str()
                              : "the hook's files are not beside the binary (build dlreset-watch)");
      return false;
    }
    environment = watch::hook_environment(*dir, channel->path());
    return true;
  }
  void drain() {
    std::vector<watch::HookEvent> received;
    channel->drain(received, sys::monotonic_s());
    events += static_cast<int>(received.size());
  }
};

/// The hook's cost a batch: the same real-torch loop as BM_WatchedProgram (2 persistent fork
/// workers, 3 epochs of 313 batches), run without the hook and with it, in turns (ABBA, so that
/// each side runs first in half of the pairs), each run timed by the program itself. One
/// iteration is two pairs; its time is the hooked runs'. Counters: the hooked/plain ratio of the
/// iteration's four runs, and each side's batches a second.
void BM_PythonHookBatches(benchmark::State& state) {
  Hook hook;
  if (!hook.open(state)) return;
  const std::string dir = std::filesystem::temp_directory_path() / ("dlreset-hook-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string time_file = dir + "/time";
  constexpr double kBatches = 3.0 * 313;  // 3 epochs of 20,000 samples in batches of 64
  const auto timed = [&](bool hooked) {
    if (run(program(time_file), hooked ? hook.environment : std::vector<std::string>{}) != 0) return -1.0;
    hook.drain();
    double seconds = -1.0;
    std::ifstream(time_file) >> seconds;
    return seconds;
  };
  double plain_s = 0.0;
  double hooked_s = 0.0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): Google Benchmark's loop variable
    double iteration_plain = 0.0;
    double iteration_hooked = 0.0;
    for (const bool hooked : {false, true, true, false}) {
      const double seconds = timed(hooked);
      if (seconds < 0) {
        state.SkipWithError("the program failed; run tests/watch/train_loop.py by hand to see why");
        break;
      }
      (hooked ? iteration_hooked : iteration_plain) += seconds;
    }
    state.SetIterationTime(iteration_hooked / 2);
    plain_s += iteration_plain;
    hooked_s += iteration_hooked;
  }
  if (plain_s > 0 && hooked_s > 0) {
    state.counters["hooked_over_plain"] = hooked_s / plain_s;
    const double runs = 2.0 * static_cast<double>(state.iterations());
    state.counters["plain_batches_per_s"] = kBatches * runs / plain_s;
    state.counters["hooked_batches_per_s"] = kBatches * runs / hooked_s;
  }
  state.counters["hook_events"] = hook.events;
  std::filesystem::remove_all(dir);
}

/// What the hook adds to a Python start: `python3 -c pass`, 20 times without the hook and 20
/// with it, alternating; the time of an iteration is the hooked starts'. Counters: each side's
/// mean start and the difference, in milliseconds.
void BM_PythonHookStartup(benchmark::State& state) {
  Hook hook;
  if (!hook.open(state)) return;
  const std::vector<std::string> python = {"/usr/bin/python3", "-c", "pass"};
  constexpr int kStarts = 20;
  double plain_s = 0.0;
  double hooked_s = 0.0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): Google Benchmark's loop variable
    double iteration_hooked = 0.0;
    for (int i = 0; i < 2 * kStarts; ++i) {
      const bool hooked = i % 2 == 1;
      const auto start = std::chrono::steady_clock::now();
      run(python, hooked ? hook.environment : std::vector<std::string>{});
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      (hooked ? iteration_hooked : plain_s) += seconds;
      hook.drain();
    }
    hooked_s += iteration_hooked;
    state.SetIterationTime(iteration_hooked / kStarts);
  }
  const double starts = kStarts * static_cast<double>(state.iterations());
  state.counters["plain_start_ms"] = 1000.0 * plain_s / starts;
  state.counters["hooked_start_ms"] = 1000.0 * hooked_s / starts;
  state.counters["hook_adds_ms"] = 1000.0 * (hooked_s - plain_s) / starts;
  state.counters["hellos"] = hook.events;
}

}  // namespace

// Google Benchmark keeps each benchmark it registers until the program ends, by design.
// NOLINTBEGIN(clang-analyzer-cplusplus.NewDeleteLeaks)
void register_watch_benchmarks() {
  benchmark::RegisterBenchmark("BM_PythonHookBatches", BM_PythonHookBatches)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_PythonHookStartup", BM_PythonHookStartup)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_PollFloor", BM_PollFloor)
      ->ArgNames({"read"})
      ->Arg(0)
      ->Arg(1)
      ->Iterations(1)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_WatchedProgram", BM_WatchedProgram)
      ->ArgNames({"watch"})
      ->Arg(static_cast<int>(Watch::unwatched))
      ->Arg(static_cast<int>(Watch::connector))
      ->Arg(static_cast<int>(Watch::poll))
      ->Arg(static_cast<int>(Watch::connector_no_memory))
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}
// NOLINTEND(clang-analyzer-cplusplus.NewDeleteLeaks)

}  // namespace dlreset::bench
