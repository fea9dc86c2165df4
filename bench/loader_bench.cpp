// Our DataLoader against LibTorch's own, and what a worker costs to start.
#include <benchmark/benchmark.h>
#include <torch/data/dataloader.h>
#include <torch/data/datasets/map.h>
#include <torch/data/datasets/mnist.h>
#include <torch/data/transforms/stack.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/benches.h"
#include "bench/support/forked_ranks.h"
#include "bench/support/process_probes.h"
#include "bench/support/scheduler_counts.h"
#include "harness/data/core/datasets/idx_dataset.h"
#include "harness/data/core/datasets/synthetic_dataset.h"
#include "harness/data/core/worker/worker_death_watch.h"
#include "harness/data/data_loader.h"
#include "harness/data/multi_processing_dataloader_iter.h"
#include "harness/sys/own_process.h"

namespace dlreset::bench {

namespace {

const data::StartMethod kMethods[] = {data::StartMethod::thread, data::StartMethod::fork, data::StartMethod::spawn};

std::int64_t drain_epoch(data::DataLoader& loader) {
  std::int64_t batches = 0;
  auto it = loader.iter();
  while (std::optional<data::Batch> batch = it->next()) {
    benchmark::DoNotOptimize(batch->inputs.data_ptr());
    ++batches;
  }
  return batches;
}

/// CPU time (user and system) of this process so far, in seconds: the main process's, and
/// with thread workers theirs too, since they are its threads.
double main_cpu_s() { return sys::own_usage().cpu_s; }

long minor_faults() { return sys::own_usage().minor_faults; }

/// This process's resident set now, in KiB, with its peak count restarted
/// (reset_peak_rss_kib), or 0 with the benchmark skipped where the count cannot be restarted.
double reset_peak_rss(benchmark::State& state) {
  const std::optional<double> kib = reset_peak_rss_kib();
  if (!kib) state.SkipWithError("Writing 5 to /proc/self/clear_refs failed, so the peak RSS cannot be reset.");
  return kib.value_or(0.0);
}

/// The pids of `loader`'s worker processes; none for thread workers, which are this process.
std::vector<std::int64_t> worker_process_pids(data::DataLoader& loader) {
  if (loader.options().start_method == data::StartMethod::thread) return {};
  const auto* workers = dynamic_cast<const data::MultiProcessingDataLoaderIter*>(loader.iterator().get().get());
  return workers ? workers->worker_pids() : std::vector<std::int64_t>{};
}

/// The bells `loader`'s workers and main process have rung so far to wake one another
/// (harness/data/core/worker/transport/descriptor_ring.h); 0 for thread workers and without slots.
std::int64_t doorbells(data::DataLoader& loader) {
  const auto* workers = dynamic_cast<const data::MultiProcessingDataLoaderIter*>(loader.iterator().get().get());
  return workers ? workers->stats().transport.doorbells : 0;
}

/// The peak RSS that the loader added, in every process, in MiB: the main process's peak above
/// `base_kib` (its resident set before the loader), plus each live worker's peak. A forked
/// worker starts out with the main process's `base_kib` resident (shared, copy-on-write), so
/// that much of its peak is not counted again; a spawned one starts from nothing. Pages two
/// processes share otherwise (the shared-memory slots, pages a fork has not written) count in
/// each.
double peak_rss_added_mib(data::DataLoader& loader, double base_kib) {
  double kib = status_field("self", "VmHWM") - base_kib;
  const bool forked = loader.options().start_method == data::StartMethod::fork;
  for (const std::int64_t pid : worker_process_pids(loader)) {
    kib += status_field(std::to_string(pid), "VmHWM") - (forked ? base_kib : 0.0);
  }
  return kib / 1024.0;
}

data::DataLoaderOptions epoch_options(data::StartMethod method, int workers, std::int64_t batch_size,
                                      bool shared_memory) {
  data::DataLoaderOptions options;
  options.batch_size = batch_size;
  options.shuffle = true;
  options.num_workers = workers;
  options.persistent_workers = workers > 0;
  options.start_method = method;
  options.shared_memory = shared_memory;
  return options;
}

/// The counters every loader family reports: main-process CPU per batch since `cpu_before`
/// (main_cpu_s()), and batches and samples a second.
void set_rate_counters(benchmark::State& state, std::int64_t batches, std::int64_t batch_size, double cpu_before) {
  state.counters["main_cpu_us_per_batch"] =
      1e6 * (main_cpu_s() - cpu_before) / static_cast<double>(std::max<std::int64_t>(batches, 1));
  state.counters["batches_per_s"] = benchmark::Counter(static_cast<double>(batches), benchmark::Counter::kIsRate);
  state.counters["samples_per_s"] =
      benchmark::Counter(static_cast<double>(batches * batch_size), benchmark::Counter::kIsRate);
}

/// CPU time the worker processes of `loader` have used so far, in seconds; 0 for thread
/// workers, whose time is the main process's.
double worker_cpu_s(data::DataLoader& loader) {
  double seconds = 0.0;
  for (const std::int64_t pid : worker_process_pids(loader)) seconds += process_cpu_s(pid);
  return seconds;
}

/// Times epochs of `loader` after a warm-up epoch in which every worker loaded its copy (the
/// steady state of a training run's data loading), and sets the counters both loader
/// families report.
void time_epochs(benchmark::State& state, data::DataLoader& loader, std::int64_t batch_size) {
  drain_epoch(loader);
  std::int64_t batches = 0;
  const double cpu_before = main_cpu_s();
  const double worker_cpu_before = worker_cpu_s(loader);
  const long faults_before = minor_faults();
  const std::int64_t doorbells_before = doorbells(loader);
  const double stolen_before = stolen_s();
  const double start = steady_now_s();
  for (auto _ : state) batches += drain_epoch(loader);
  set_rate_counters(state, batches, batch_size, cpu_before);
  state.counters["stolen"] = stolen_share(stolen_s() - stolen_before, steady_now_s() - start);
  // Where the process back-ends' time goes beside the main process's: the two add up to all
  // the CPU a batch costs (a thread back-end's is all in main_cpu_us_per_batch).
  state.counters["worker_cpu_us_per_batch"] =
      1e6 * (worker_cpu_s(loader) - worker_cpu_before) / static_cast<double>(std::max<std::int64_t>(batches, 1));
  // With process workers every batch arrives in memory the main process maps, and faulting it
  // in again at every batch costs CPU there.
  state.counters["main_minor_faults_per_batch"] =
      static_cast<double>(minor_faults() - faults_before) / static_cast<double>(std::max<std::int64_t>(batches, 1));
  // A task or batch on the slots' rings costs a system call only when its reader slept: two a
  // batch at most (the task's bell and the batch's).
  state.counters["doorbells_per_batch"] = static_cast<double>(doorbells(loader) - doorbells_before) /
                                          static_cast<double>(std::max<std::int64_t>(batches, 1));
}

std::string transport_label(data::StartMethod method, int workers, bool shared_memory) {
  std::string label = std::string(data::to_string(method)) + ", " + std::to_string(workers) + " workers";
  if (method != data::StartMethod::thread && workers > 0) label += shared_memory ? ", shm" : ", socket";
  return label;
}

/// One epoch over the 60000 training images with persistent workers, in the steady state.
/// shm:0 sends every batch through the worker's socket, as before the shared-memory slots, so
/// one run compares the two transports.
void BM_LoaderEpoch(benchmark::State& state, const BenchConfig& config) {
  const auto method = kMethods[state.range(0)];
  const int workers = static_cast<int>(state.range(1));
  const bool shared_memory = state.range(2) != 0;
  data::DataLoader loader(std::shared_ptr<data::Dataset>(data::make_fashion_mnist(config.data_dir, "train")),
                          epoch_options(method, workers, config.batch_size, shared_memory));
  time_epochs(state, loader, config.batch_size);
  state.SetLabel(transport_label(method, workers, shared_memory));
}

/// What a batch request pays for the death watch (worker_death_watch.h), which every
/// next() of every loader asks whether a worker of another loader died: with start:0 no
/// process worker is watched (one atomic load); with start:1 a loader's 2 fork workers are
/// (a clock read, and one epoll_wait every 100 ms). Against the tens of microseconds of a
/// BM_LoaderEpoch batch.
void BM_WorkerDeathCheck(benchmark::State& state) {
  data::DataLoaderOptions options;
  options.name = "watched";
  options.batch_size = 2;
  options.num_workers = 2;
  options.persistent_workers = true;
  options.start_method = kMethods[state.range(0)];
  data::SyntheticDatasetOptions samples;
  samples.size = 8;
  data::DataLoader loader(std::make_shared<data::SyntheticDataset>(samples), options);
  const auto iterator = loader.iter();  // its workers live, and are watched, until it goes
  for (auto _ : state) data::detail::throw_if_a_worker_died(nullptr);
  state.counters["watched"] = data::detail::WorkerDeathWatch::global().watched();
}

/// One loader's side of BM_LoaderEpochPaired, summed over its epochs.
struct EpochTotals {
  std::int64_t batches = 0;
  double seconds = 0.0;
  /// CPU seconds of the main process and the worker processes together.
  double cpu_s = 0.0;
  double stolen_s = 0.0;
  SchedulerCounts counts;
};

/// Times one epoch of `loader` alone, on the steady clock, and adds it to `totals`.
void timed_epoch(data::DataLoader& loader, EpochTotals& totals) {
  const SchedulerCounts before = scheduler_counts(worker_process_pids(loader));
  const double cpu_before = main_cpu_s() + worker_cpu_s(loader);
  const double stolen_before = stolen_s();
  const double start = steady_now_s();
  totals.batches += drain_epoch(loader);
  totals.seconds += steady_now_s() - start;
  totals.stolen_s += stolen_s() - stolen_before;
  totals.cpu_s += main_cpu_s() + worker_cpu_s(loader) - cpu_before;
  totals.counts += scheduler_counts(worker_process_pids(loader)) - before;
}

/// BM_LoaderEpoch's ratio of a process back-end to the thread back-end, measured so that this
/// machine's drift cannot enter it. BM_LoaderEpoch times the two back-ends in repetitions of
/// their own, seconds to minutes apart, and a neighbour's busy minute lands on one of them;
/// here a loader of process workers and one of thread workers, both warm and over the same
/// images, take turns epoch by epoch, and each epoch is timed alone. The thread loader goes
/// first in even iterations and second in odd ones, so that neither always follows the other.
/// `against_thread` is the process loader's batches/s over the thread loader's within the
/// repetition; the benchmark's own time is that of a pair of epochs.
void BM_LoaderEpochPaired(benchmark::State& state, const BenchConfig& config) {
  const auto method = kMethods[state.range(0)];
  const int workers = static_cast<int>(state.range(1));
  data::DataLoader process(std::shared_ptr<data::Dataset>(data::make_fashion_mnist(config.data_dir, "train")),
                           epoch_options(method, workers, config.batch_size, true));
  data::DataLoader thread(std::shared_ptr<data::Dataset>(data::make_fashion_mnist(config.data_dir, "train")),
                          epoch_options(data::StartMethod::thread, workers, config.batch_size, true));
  drain_epoch(process);
  drain_epoch(thread);
  EpochTotals process_side;
  EpochTotals thread_side;
  std::int64_t pair = 0;
  for (auto _ : state) {
    if (pair++ % 2 == 0) {
      timed_epoch(thread, thread_side);
      timed_epoch(process, process_side);
    } else {
      timed_epoch(process, process_side);
      timed_epoch(thread, thread_side);
    }
  }
  const double process_rate = static_cast<double>(process_side.batches) / process_side.seconds;
  const double thread_rate = static_cast<double>(thread_side.batches) / thread_side.seconds;
  state.counters["batches_per_s"] = process_rate;
  state.counters["thread_batches_per_s"] = thread_rate;
  state.counters["against_thread"] = process_rate / thread_rate;
  const auto per_batch = [](double count, const EpochTotals& side) {
    return count / static_cast<double>(std::max<std::int64_t>(side.batches, 1));
  };
  state.counters["cpu_us_per_batch"] = 1e6 * per_batch(process_side.cpu_s, process_side);
  state.counters["thread_cpu_us_per_batch"] = 1e6 * per_batch(thread_side.cpu_s, thread_side);
  state.counters["stolen"] = stolen_share(process_side.stolen_s, process_side.seconds);
  state.counters["thread_stolen"] = stolen_share(thread_side.stolen_s, thread_side.seconds);
  state.counters["sleeps_per_batch"] = per_batch(process_side.counts.sleeps, process_side);
  state.counters["thread_sleeps_per_batch"] = per_batch(thread_side.counts.sleeps, thread_side);
  state.counters["preemptions_per_batch"] = per_batch(process_side.counts.preemptions, process_side);
  state.counters["thread_preemptions_per_batch"] = per_batch(thread_side.counts.preemptions, thread_side);
  state.counters["minor_faults_per_batch"] = per_batch(process_side.counts.minor_faults, process_side);
  state.counters["thread_minor_faults_per_batch"] = per_batch(thread_side.counts.minor_faults, thread_side);
  state.SetLabel(transport_label(method, workers, true) + " against thread, epochs alternating");
}

/// BM_LoaderEpoch at 4 workers over batch sizes, with the peak RSS the loader added in every
/// process: what the slots cost in memory against what they save in time.
void BM_LoaderBatchSize(benchmark::State& state, const BenchConfig& config) {
  const auto method = kMethods[state.range(0)];
  const std::int64_t batch_size = state.range(1);
  const bool shared_memory = state.range(2) != 0;
  constexpr int kWorkers = 4;
  const double base_kib = reset_peak_rss(state);
  data::DataLoader loader(std::shared_ptr<data::Dataset>(data::make_fashion_mnist(config.data_dir, "train")),
                          epoch_options(method, kWorkers, batch_size, shared_memory));
  time_epochs(state, loader, batch_size);
  state.counters["peak_rss_added_mib"] = peak_rss_added_mib(loader, base_kib);
  state.SetLabel(transport_label(method, kWorkers, shared_memory) + ", batch " + std::to_string(batch_size));
}

/// The yardstick: torch::data::make_data_loader over LibTorch's MNIST dataset (which loads
/// everything into one tensor up front) on the same, decompressed files, with Stack<> collation.
/// Its workers are threads, so the peak RSS this one process added is all of it.
void BM_LibTorchLoaderEpoch(benchmark::State& state, DecompressedFashionMnist& files, const BenchConfig& config) {
  const auto workers = static_cast<std::size_t>(state.range(0));
  const std::int64_t batch_size = state.range(1) > 0 ? state.range(1) : config.batch_size;
  const double base_kib = reset_peak_rss(state);
  auto dataset = torch::data::datasets::MNIST(files.dir()).map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader(
      std::move(dataset),
      torch::data::DataLoaderOptions().batch_size(static_cast<std::size_t>(batch_size)).workers(workers));
  std::int64_t batches = 0;
  const double cpu_before = main_cpu_s();
  for (auto _ : state) {
    for (auto& batch : *loader) {
      benchmark::DoNotOptimize(batch.data.data_ptr());
      ++batches;
    }
  }
  set_rate_counters(state, batches, batch_size, cpu_before);
  state.counters["peak_rss_added_mib"] = (status_field("self", "VmHWM") - base_kib) / 1024.0;
  state.SetLabel("libtorch threads, " + std::to_string(workers) + " workers, batch " + std::to_string(batch_size));
}

/// What one rank does at 1.5.0's epoch start: a new iterator, whose W new workers each load the
/// dataset and deliver their first batch; then that iterator's shutdown.
StartupTimes start_and_stop(data::DataLoader& loader, int workers) {
  StartupTimes times;
  auto it = loader.iter();
  // Batches are handed out round-robin: batch w comes from worker w.
  for (int w = 0; w < workers; ++w) benchmark::DoNotOptimize(it->next());
  times.started_s = steady_now_s();
  // The shutdown is timed apart: a re-spawn pays both, the old workers' shutdown and the new
  // ones' start.
  it.reset();
  times.shut_down_s = steady_now_s();
  return times;
}

/// From iter() until each of `workers` new workers has delivered its first batch: the
/// workers' start and, on Fashion-MNIST, their dataset loads, all at once as when a loader's
/// workers are (re)spawned. dataset:0 is the train split (60000 images), 2 the t10k split;
/// dataset:1 is synthetic and loads nothing, so it shows the start alone. With ranks:R, R
/// processes do so at the same moment, and the time is the slowest one's.
void BM_WorkerStartup(benchmark::State& state, const BenchConfig& config) {
  const auto method = kMethods[state.range(0)];
  const int dataset_kind = static_cast<int>(state.range(1));
  const int workers = static_cast<int>(state.range(2));
  const int ranks = static_cast<int>(state.range(3));
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
    std::optional<ForkedRanks> others;
    if (ranks > 1) others.emplace(ranks - 1, [&loader, workers] { return start_and_stop(loader, workers); });
    const double start = steady_now_s();
    if (others) others->go();
    std::vector<StartupTimes> all{start_and_stop(loader, workers)};
    if (others) {
      for (const StartupTimes& times : others->times()) all.push_back(times);
    }
    // A step of the job waits for the slowest rank; so does the shutdown that follows.
    double started = start;
    double shut_down = start;
    for (const StartupTimes& times : all) {
      if (std::isnan(times.started_s)) {
        state.SkipWithError("A forked rank could not start its workers.");
        break;
      }
      started = std::max(started, times.started_s);
      shut_down = std::max(shut_down, times.shut_down_s);
    }
    state.SetIterationTime(started - start);
    shutdown_s += shut_down - started;
  }
  state.counters["shutdown_s"] = shutdown_s / static_cast<double>(state.iterations());
  static const char* const kDatasets[] = {"fashion-mnist train", "no load", "fashion-mnist t10k"};
  state.SetLabel(std::string(data::to_string(method)) + ", " + std::to_string(workers) + " at once" +
                 (ranks > 1 ? " in each of " + std::to_string(ranks) + " ranks" : std::string()) + ", " +
                 kDatasets[dataset_kind]);
}

}  // namespace

void register_loader_benchmarks(const BenchConfig& config, DecompressedFashionMnist& files) {
  // An epoch of ours takes 30-80 ms here: 15 of them per repetition, so that a neighbour's
  // burst of a few milliseconds does not decide a row.
  constexpr int kLoaderEpochs = 15;
  auto* ours = benchmark::RegisterBenchmark("BM_LoaderEpoch",
                                            [&config](benchmark::State& state) { BM_LoaderEpoch(state, config); });
  ours->ArgNames({"start", "workers", "shm"})->Args({0, 0, 1});
  for (int workers : {1, 2, 4}) {
    ours->Args({0, workers, 1});
    for (int start : {1, 2}) {
      for (int shm : {1, 0}) ours->Args({start, workers, shm});
    }
  }
  ours->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(kLoaderEpochs);

  // 16 pairs: each side runs about as many epochs as in a repetition of BM_LoaderEpoch, an even
  // number, so that each goes first in half of the pairs.
  benchmark::RegisterBenchmark("BM_LoaderEpochPaired",
                               [&config](benchmark::State& state) { BM_LoaderEpochPaired(state, config); })
      ->ArgNames({"start", "workers"})
      ->ArgsProduct({{1, 2}, {1, 2, 4}})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->Iterations(16);

  auto* sizes = benchmark::RegisterBenchmark("BM_LoaderBatchSize",
                                             [&config](benchmark::State& state) { BM_LoaderBatchSize(state, config); });
  sizes->ArgNames({"start", "batch", "shm"});
  for (int batch : {64, 1024, 8192}) {
    sizes->Args({0, batch, 1});
    for (int start : {1, 2}) {
      for (int shm : {1, 0}) sizes->Args({start, batch, shm});
    }
  }
  sizes->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(kLoaderEpochs);

  // batch:0 is --batch-size, for the rows beside BM_LoaderEpoch; the others, beside
  // BM_LoaderBatchSize.
  auto* theirs = benchmark::RegisterBenchmark("BM_LibTorchLoaderEpoch", [&files, &config](benchmark::State& state) {
    BM_LibTorchLoaderEpoch(state, files, config);
  });
  theirs->ArgNames({"workers", "batch"});
  for (int workers : {0, 1, 2, 4}) theirs->Args({workers, 0});
  for (int batch : {64, 1024, 8192}) theirs->Args({4, batch});
  theirs->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(kLoaderEpochs);

  benchmark::RegisterBenchmark("BM_WorkerDeathCheck", BM_WorkerDeathCheck)
      ->ArgNames({"start"})
      ->Args({0})
      ->Args({1})
      ->Unit(benchmark::kNanosecond);

  benchmark::RegisterBenchmark("BM_WorkerStartup",
                               [&config](benchmark::State& state) { BM_WorkerStartup(state, config); })
      ->ArgNames({"start", "dataset", "workers", "ranks"})
      ->ArgsProduct({{0, 1, 2}, {0, 1, 2}, {1, 2, 4}, {1}})
      // The ranks of a DDP job on this machine, each starting its own W at the same moment
      // (docs/results.md, "Across ranks"): fork workers, both splits, W = 1 and 2.
      ->ArgsProduct({{1}, {0, 2}, {1, 2}, {2}})
      ->Unit(benchmark::kMillisecond)
      ->UseManualTime()
      ->Iterations(5);
}

}  // namespace dlreset::bench
