// Our DataLoader against LibTorch's own, and what a worker costs to start.
#include <benchmark/benchmark.h>
#include <torch/data/dataloader.h>
#include <torch/data/datasets/map.h>
#include <torch/data/datasets/mnist.h>
#include <torch/data/transforms/stack.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

#include "bench/benches.h"
#include "harness/data/data_loader.h"
#include "harness/data/idx_dataset.h"
#include "harness/data/synthetic_dataset.h"

namespace dlreset::bench {

namespace {

const data::StartMethod kMethods[] = {data::StartMethod::thread, data::StartMethod::fork,
                                      data::StartMethod::spawn};

std::int64_t drain_epoch(data::DataLoader& loader) {
  std::int64_t batches = 0;
  auto it = loader.iter();
  while (std::optional<data::Batch> batch = it->next()) {
    benchmark::DoNotOptimize(batch->inputs.data_ptr());
    ++batches;
  }
  return batches;
}

/// One epoch over the 60000 training images with persistent workers, after a warm-up epoch in
/// which every worker loaded its copy: the steady state of a training run's data loading.
void BM_LoaderEpoch(benchmark::State& state, const BenchConfig& config) {
  const auto method = kMethods[state.range(0)];
  const int workers = static_cast<int>(state.range(1));
  data::DataLoaderOptions options;
  options.batch_size = config.batch_size;
  options.shuffle = true;
  options.num_workers = workers;
  options.persistent_workers = workers > 0;
  options.start_method = method;
  data::DataLoader loader(std::shared_ptr<data::Dataset>(data::make_fashion_mnist(config.data_dir, "train")),
                          options);
  drain_epoch(loader);
  std::int64_t batches = 0;
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  for (auto _ : state) batches += drain_epoch(loader);
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  // The main process's own page faults: with process workers every batch arrives in memory
  // the main process allocates, and faulting it in again at every batch costs CPU there.
  state.counters["main_minor_faults_per_batch"] =
      static_cast<double>(after.ru_minflt - before.ru_minflt) / static_cast<double>(std::max<std::int64_t>(batches, 1));
  state.counters["batches_per_s"] = benchmark::Counter(static_cast<double>(batches), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(data::to_string(method)) + ", " + std::to_string(workers) + " workers");
}

/// The yardstick: torch::data::make_data_loader over LibTorch's MNIST dataset (which loads
/// everything into one tensor up front) on the same, decompressed files, with Stack<> collation.
void BM_LibTorchLoaderEpoch(benchmark::State& state, DecompressedFashionMnist& files, const BenchConfig& config) {
  const auto workers = static_cast<std::size_t>(state.range(0));
  auto dataset = torch::data::datasets::MNIST(files.dir()).map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader(
      std::move(dataset),
      torch::data::DataLoaderOptions().batch_size(static_cast<std::size_t>(config.batch_size)).workers(workers));
  std::int64_t batches = 0;
  for (auto _ : state) {
    for (auto& batch : *loader) {
      benchmark::DoNotOptimize(batch.data.data_ptr());
      ++batches;
    }
  }
  state.counters["batches_per_s"] = benchmark::Counter(static_cast<double>(batches), benchmark::Counter::kIsRate);
  state.SetLabel("libtorch threads, " + std::to_string(workers) + " workers");
}

/// From iter() until each of `workers` new workers has delivered its first batch: the
/// workers' start and, on Fashion-MNIST, their dataset loads, all at once as when a loader's
/// workers are (re)spawned. dataset:0 is the train split (60000 images), 2 the t10k split;
/// dataset:1 is synthetic and loads nothing, so it shows the start alone.
void BM_WorkerStartup(benchmark::State& state, const BenchConfig& config) {
  const auto method = kMethods[state.range(0)];
  const int dataset_kind = static_cast<int>(state.range(1));
  const int workers = static_cast<int>(state.range(2));
  data::DataLoaderOptions options;
  options.batch_size = config.batch_size;
  options.num_workers = workers;
  options.start_method = method;
  double shutdown_s = 0.0;
  for (auto _ : state) {
    std::shared_ptr<data::Dataset> dataset;
    if (dataset_kind == 1) {
      data::SyntheticDatasetOptions synthetic;
      synthetic.size = 4096;
      synthetic.sample_shape = {1, 28, 28};
      dataset = std::make_shared<data::SyntheticDataset>(synthetic);
    } else {
      dataset = data::make_fashion_mnist(config.data_dir, dataset_kind == 0 ? "train" : "t10k");
    }
    data::DataLoader loader(dataset, options);
    const auto start = std::chrono::steady_clock::now();
    auto it = loader.iter();
    // Batches are handed out round-robin: batch w comes from worker w.
    for (int w = 0; w < workers; ++w) benchmark::DoNotOptimize(it->next());
    const auto started = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(started - start).count());
    // The shutdown is timed apart: a re-spawn pays both, the old workers' shutdown and the new
    // ones' start.
    it.reset();
    shutdown_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  state.counters["shutdown_s"] = shutdown_s / static_cast<double>(state.iterations());
  static const char* const kDatasets[] = {"fashion-mnist train", "no load", "fashion-mnist t10k"};
  state.SetLabel(std::string(data::to_string(method)) + ", " + std::to_string(workers) + " at once, " +
                 kDatasets[dataset_kind]);
}

}  // namespace

void register_loader_benchmarks(const BenchConfig& config, DecompressedFashionMnist& files) {
  auto* ours = benchmark::RegisterBenchmark("BM_LoaderEpoch", [&config](benchmark::State& state) {
    BM_LoaderEpoch(state, config);
  });
  ours->ArgNames({"start", "workers"})->Args({0, 0});
  for (int start : {0, 1}) {
    for (int workers : {1, 2, 4}) ours->Args({start, workers});
  }
  ours->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

  benchmark::RegisterBenchmark("BM_LibTorchLoaderEpoch",
                               [&files, &config](benchmark::State& state) {
                                 BM_LibTorchLoaderEpoch(state, files, config);
                               })
      ->ArgName("workers")
      ->Arg(0)->Arg(1)->Arg(2)->Arg(4)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->Iterations(3);

  benchmark::RegisterBenchmark("BM_WorkerStartup", [&config](benchmark::State& state) {
    BM_WorkerStartup(state, config);
  })
      ->ArgNames({"start", "dataset", "workers"})
      ->ArgsProduct({{0, 1, 2}, {0, 1, 2}, {1, 2, 4}})
      ->Unit(benchmark::kMillisecond)
      ->UseManualTime()
      ->Iterations(5);
}

}  // namespace dlreset::bench
