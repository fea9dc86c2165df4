// What `dlreset watch` costs: the watcher's own CPU, and the time of the program it watches.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/benches.h"

extern char** environ;

namespace dlreset::bench {

namespace {

enum Watch { kUnwatched, kConnector, kPoll };

/// A real-torch loop with persistent workers: 2 workers, 3 epochs of 20,000 samples, about
/// 2 s of training on two cores after the interpreter's start.
std::vector<std::string> program(const std::string& time_file) {
  return {"/usr/bin/python3", std::string(DLRESET_SOURCE_DIR) + "/tests/watch/train_loop.py",
          "--workers", "2", "--epochs", "3", "--samples", "20000", "--time-file", time_file};
}

int run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The program's and the watcher's output would drown the benchmark's table.
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// watch:0 runs the program alone, watch:1 under `dlreset watch` with the events connector,
/// watch:2 polling every 5 ms. The time of an iteration is the program's own (from its loader's
/// creation to the end of training, which it writes to a file): the watcher's start-up is not
/// the program's slowdown. Counters: the watcher's share of one core over the watch.
void BM_WatchedProgram(benchmark::State& state) {
  const auto watch = static_cast<Watch>(state.range(0));
  const std::string dir = std::filesystem::temp_directory_path() / ("dlreset-watch-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string time_file = dir + "/time";
  const std::string json_file = dir + "/watch.json";
  const std::string dlreset = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "dlreset";
  double watcher_cpu_s = 0.0;
  double watched_s = 0.0;
  for (auto _ : state) {
    std::vector<std::string> args;
    if (watch != kUnwatched) {
      args = {dlreset, "watch", "--mode", watch == kConnector ? "connector" : "poll", "--json", json_file, "--"};
    }
    for (std::string& arg : program(time_file)) args.push_back(std::move(arg));
    if (run(args) != 0) {
      state.SkipWithError("the watched program failed; run it by hand to see why");
      break;
    }
    double seconds = 0.0;
    std::ifstream(time_file) >> seconds;
    state.SetIterationTime(seconds);
    if (watch != kUnwatched) {
      const nlohmann::json report = nlohmann::json::parse(std::ifstream(json_file));
      watcher_cpu_s += report["watcher_cpu_s"].get<double>();
      watched_s += report["duration_s"].get<double>();
    }
  }
  if (watched_s > 0) state.counters["watcher_cpu_pct"] = 100.0 * watcher_cpu_s / watched_s;
  std::filesystem::remove_all(dir);
}

double cpu_time_s() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
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
  for (auto _ : state) {
    const double before = cpu_time_s();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 800; ++i) {
      ::poll(nullptr, 0, 5);
      if (read) benchmark::DoNotOptimize(::pread(loadavg, buffer, sizeof buffer, 0));
    }
    cpu_s += cpu_time_s() - before;
    wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  ::close(loadavg);
  state.counters["cpu_pct"] = 100.0 * cpu_s / wall_s;
}

}  // namespace

void register_watch_benchmarks() {
  benchmark::RegisterBenchmark("BM_PollFloor", BM_PollFloor)
      ->ArgNames({"read"})
      ->Arg(0)
      ->Arg(1)
      ->Iterations(1)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_WatchedProgram", BM_WatchedProgram)
      ->ArgNames({"watch"})
      ->Arg(kUnwatched)
      ->Arg(kConnector)
      ->Arg(kPoll)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace dlreset::bench
