// Whole fits of each variant, and the compute-only lower bound they are measured against.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "bench/benches.h"
#include "bench/support/memory_sampler.h"
#include "harness/data/core/datasets/idx_dataset.h"
#include "harness/data/data_loader.h"
#include "harness/workload/fashion_mnist_module.h"
#include "variants/fit_report.h"

namespace dlreset::bench {

namespace {

const variants::Variant kVariants[] = {variants::Variant::buggy, variants::Variant::fixed,
                                       variants::Variant::workaround, variants::Variant::vanilla};
const data::StartMethod kMethods[] = {data::StartMethod::thread, data::StartMethod::fork, data::StartMethod::spawn};

std::shared_ptr<data::DataLoader> fashion_loader(const BenchConfig& config, const std::string& split,
                                                 const std::string& name, int workers, data::StartMethod method) {
  data::DataLoaderOptions options;
  options.name = name;
  options.batch_size = config.batch_size;
  options.shuffle = split == "train";
  options.num_workers = workers;
  options.persistent_workers = workers > 0;
  options.pin_memory = true;
  options.start_method = method;
  return std::make_shared<data::DataLoader>(std::shared_ptr<data::Dataset>(data::make_fashion_mnist(config.data_dir,
                                                                                                    split)),
                                            options);
}

workload::WorkloadOptions workload_options(const BenchConfig& config) {
  workload::WorkloadOptions options;
  options.device = config.device;
  return options;
}

lightning::TrainerOptions trainer_options(const BenchConfig& config) {
  lightning::TrainerOptions trainer;
  trainer.max_epochs = config.epochs;
  trainer.limit_train_batches = config.limit_train_batches;
  trainer.limit_val_batches = config.limit_val_batches;
  return trainer;
}

/// A whole fit, loaders and model built fresh each iteration, as a user's run would be.
void BM_Fit(benchmark::State& state, const BenchConfig& config) {
  const auto variant = kVariants[state.range(0)];
  const int workers = static_cast<int>(state.range(1));
  const auto method = kMethods[state.range(2)];
  variants::FitReport report;
  double peak_mib = 0.0;
  double later_epochs_s = 0.0;
  for (auto _ : state) {
    auto train = fashion_loader(config, "train", "train", workers, method);
    auto val = fashion_loader(config, "t10k", "val", workers, method);
    workload::FashionMnistModule model(workload_options(config));
    MemorySampler memory;
    report = variants::run_fit(variant, model, train, val, trainer_options(config));
    peak_mib = std::max(peak_mib, memory.peak_mib());
    double sum = 0.0;
    for (std::size_t e = 1; e < report.epochs.size(); ++e) sum += report.epochs[e].seconds;
    later_epochs_s = report.epochs.size() > 1 ? sum / static_cast<double>(report.epochs.size() - 1) : 0.0;
  }
  state.counters["worker_spawns"] =
      static_cast<double>(report.train.counters.worker_spawns + report.val.counters.worker_spawns);
  state.counters["dataset_loads"] =
      static_cast<double>(report.train.counters.dataset_loads + report.val.counters.dataset_loads);
  state.counters["iterator_resets"] =
      static_cast<double>(report.train.counters.iterator_resets + report.val.counters.iterator_resets);
  state.counters["peak_mib"] = peak_mib;
  state.counters["epoch_s_after_first"] = later_epochs_s;
  state.counters["epoch0_s"] = report.epochs.empty() ? 0.0 : report.epochs[0].seconds;
  state.counters["sanity_s"] = report.sanity_check_s;
  state.SetLabel(std::string(variants::to_string(variant)) + ", " + data::to_string(method) + ", " +
                 std::to_string(workers) + " workers");
}

/// The same model steps as a fit (sanity check, then per epoch the training and validation
/// batches) on batches already in memory: no loader at all. The floor a fit's time can reach.
void BM_ComputeOnly(benchmark::State& state, const BenchConfig& config) {
  auto train = fashion_loader(config, "train", "train", 0, data::StartMethod::fork);
  auto val = fashion_loader(config, "t10k", "val", 0, data::StartMethod::fork);
  std::vector<data::Batch> train_batches;
  std::vector<data::Batch> val_batches;
  {
    auto it = train->iter();
    while (static_cast<long>(train_batches.size()) < config.limit_train_batches) train_batches.push_back(*it->next());
    auto val_it = val->iter();
    while (static_cast<long>(val_batches.size()) < config.limit_val_batches) val_batches.push_back(*val_it->next());
  }
  double epoch_s = 0.0;
  for (auto _ : state) {
    workload::FashionMnistModule model(workload_options(config));
    const int sanity_steps = std::min<int>(2, static_cast<int>(val_batches.size()));
    for (int i = 0; i < sanity_steps; ++i) {
      model.validation_step(model.transfer_batch_to_device(val_batches[static_cast<std::size_t>(i)]), i);
    }
    double total = 0.0;
    for (int epoch = 0; epoch < config.epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < train_batches.size(); ++i) {
        model.training_step(model.transfer_batch_to_device(train_batches[i]), static_cast<std::int64_t>(i));
      }
      for (std::size_t i = 0; i < val_batches.size(); ++i) {
        model.validation_step(model.transfer_batch_to_device(val_batches[i]), static_cast<std::int64_t>(i));
      }
      // Each step already waits for its loss (item()); this makes the clock's read safe even
      // if a step stops doing so.
      model.synchronize();
      total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    epoch_s = total / config.epochs;
  }
  state.counters["epoch_s"] = epoch_s;
  state.SetLabel("model steps only, " + std::to_string(config.epochs) + " epochs");
}

}  // namespace

/// CUDA's first use in a process creates its context and loads cuBLAS and cuDNN: seconds that
/// would otherwise land in whichever fit happens to run first, and that no variant should be
/// charged with. One real batch, pinned as in the fits, through one training and one validation
/// step pays them up front.
void warm_up_device(const BenchConfig& config) {
  auto val = fashion_loader(config, "t10k", "val", 0, data::StartMethod::fork);
  const data::Batch batch = *val->iter()->next();
  workload::FashionMnistModule model(workload_options(config));
  model.training_step(model.transfer_batch_to_device(batch), 0);
  model.validation_step(model.transfer_batch_to_device(batch), 0);
  model.synchronize();
}

void register_fit_benchmarks(const BenchConfig& config) {
  auto* fit = benchmark::RegisterBenchmark("BM_Fit", [&config](benchmark::State& state) { BM_Fit(state, config); });
  fit->ArgNames({"variant", "workers", "start"});
  // buggy, fixed and vanilla; W in {0, 1, 2, 4}; fork and spawn (W = 0 starts no worker).
  for (int variant : {0, 1, 3}) {
    fit->Args({variant, 0, 1});
    for (int start : {1, 2}) {
      for (int workers : {1, 2, 4}) fit->Args({variant, workers, start});
    }
  }
  fit->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

  benchmark::RegisterBenchmark("BM_ComputeOnly", [&config](benchmark::State& state) { BM_ComputeOnly(state, config); })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->Iterations(1);
}

}  // namespace dlreset::bench
