// dlreset_bench: Google Benchmark's flags, plus the workload of the fit families:
//   --data=DIR  --epochs=N  --limit-train-batches=N  --limit-val-batches=N  --batch-size=N
//   --device=auto|cpu|cuda
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/benches.h"
#include "harness/workload/device.h"

namespace {

/// Takes our flags out of argv, leaving Google Benchmark's; false on a bad value.
bool parse_own_flags(int& argc, char** argv, dlreset::bench::BenchConfig& config) {
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value_of = [&](const char* flag) -> const char* {
      const std::size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 && arg.size() > n && arg[n] == '=' ? argv[i] + n + 1 : nullptr;
    };
    auto positive = [&](const char* text, long& out, const char* flag) {
      char* end = nullptr;
      out = std::strtol(text, &end, 10);
      if (*end != '\0' || out <= 0) {
        std::cerr << "dlreset_bench: " << flag << " accepts a positive integer, got '" << text << "'\n";
        return false;
      }
      return true;
    };
    long number = 0;
    if (const char* v = value_of("--data")) {
      config.data_dir = v;
    } else if (const char* v = value_of("--epochs")) {
      if (!positive(v, number, "--epochs")) return false;
      config.epochs = static_cast<int>(number);
    } else if (const char* v = value_of("--limit-train-batches")) {
      if (!positive(v, config.limit_train_batches, "--limit-train-batches")) return false;
    } else if (const char* v = value_of("--limit-val-batches")) {
      if (!positive(v, config.limit_val_batches, "--limit-val-batches")) return false;
    } else if (const char* v = value_of("--batch-size")) {
      if (!positive(v, number, "--batch-size")) return false;
      config.batch_size = static_cast<int>(number);
    } else if (const char* v = value_of("--device")) {
      config.device = v;
    } else {
      rest.push_back(argv[i]);
    }
  }
  argc = static_cast<int>(rest.size());
  for (int i = 0; i < argc; ++i) argv[i] = rest[static_cast<std::size_t>(i)];
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  dlreset::bench::BenchConfig config;
  if (!parse_own_flags(argc, argv, config)) return 2;
  dlreset::workload::DeviceChoice device;
  try {
    device = dlreset::workload::resolve_device(config.device);
  } catch (const std::invalid_argument& error) {
    std::cerr << "dlreset_bench: --device: " << error.what() << "\n";
    return 2;
  }
  // In the JSON's context, so that every figure says where its model ran.
  benchmark::AddCustomContext("dlreset_device", device.description);
  dlreset::bench::DecompressedFashionMnist files(config.data_dir);
  dlreset::bench::register_loader_benchmarks(config, files);
  dlreset::bench::register_fit_benchmarks(config);
  dlreset::bench::register_watched_benchmarks();
  dlreset::bench::register_watch_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  if (device.cuda) dlreset::bench::warm_up_device(config);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
