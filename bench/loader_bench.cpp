// Our DataLoader against LibTorch's own, and what a worker costs to start.
#include <benchmark/benchmark.h>
#include <torch/data/dataloader.h>
#include <torch/data/datasets/map.h>
#include <torch/data/datasets/mnist.h>
#include <torch/data/transforms/stack.h>

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
  for (auto _ : state) batches += drain_epoch(loader);
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

/// From iter() to the first batch with one new worker: the worker's start, plus, on
/// Fashion-MNIST, its dataset load. The synthetic dataset (dataset:1) loads nothing, so it
/// shows the start alone.
void BM_WorkerStartup(benchmark::State& state, const BenchConfig& config) {
  const auto method = kMethods[state.range(0)];
  const bool fashion = state.range(1) == 0;
  data::DataLoaderOptions options;
  options.batch_size = config.batch_size;
  options.num_workers = 1;
  options.start_method = method;
  for (auto _ : state) {
    std::shared_ptr<data::Dataset> dataset;
    if (fashion) {
      dataset = data::make_fashion_mnist(config.data_dir, "train");
    } else {
      data::SyntheticDatasetOptions synthetic;
      synthetic.size = 256;
      synthetic.sample_shape = {1, 28, 28};
      dataset = std::make_shared<data::SyntheticDataset>(synthetic);
    }
    data::DataLoader loader(dataset, options);
    const auto start = std::chrono::steady_clock::now();
    auto it = loader.iter();
    benchmark::DoNotOptimize(it->next());
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    it.reset();  // the shutdown happens outside the measured interval
  }
  state.SetLabel(std::string(data::to_string(method)) + (fashion ? ", fashion-mnist train" : ", no load"));
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
      ->ArgNames({"start", "dataset"})
      ->ArgsProduct({{0, 1, 2}, {0, 1}})
      ->Unit(benchmark::kMillisecond)
      ->UseManualTime()
      ->Iterations(5);
}

}  // namespace dlreset::bench
