// One fit of the Fashion-MNIST workload from RunOptions: what `dlreset run` and `dlreset demo`
// both do.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/run_options.h"
#include "harness/lightning/callback.h"
#include "harness/lightning/trainer_options.h"
#include "harness/profiler/profiler.h"
#include "harness/trace/event_log.h"
#include "harness/workload/fashion_mnist_module.h"
#include "variants/fit_report.h"

namespace dlreset::app {

struct FitHooks {
  std::vector<lightning::Callback*> callbacks;
  profiler::Profiler* profiler = nullptr;
  /// Called once the model is built, before the fit (e.g. to print the device).
  std::function<void(const std::string& device)> on_ready;
  // Set on a rank of a multi-rank job (distributed_run.h): TrainerOptions::distributed and
  // ::reduce_mean, WorkloadOptions::all_reduce_gradients.
  std::optional<lightning::DistributedSamplerKwargs> distributed;
  std::function<double(double)> reduce_mean;
  std::function<void(at::Tensor& flat_gradients)> all_reduce_gradients;
};

struct FashionFit {
  variants::FitReport report;
  std::string device;
  /// FNV-1a over the bytes of every parameter after each epoch (and its validation): equal
  /// digests on two ranks mean bitwise equal weights.
  std::vector<std::uint64_t> parameter_digests;
};

/// The CNN's options for a run with `options` (device, optimizer, learning rate, threads, seed),
/// as fit_fashion_mnist builds it; the workload's oracle test builds its model from these too.
workload::WorkloadOptions workload_options(const RunOptions& options);

/// Builds the train (60000 images, shuffled) and val (t10k, in order) loaders with the
/// options' worker settings, the CNN, and fits with the options' variant. Throws DatasetError
/// for a missing or corrupt data set.
FashionFit fit_fashion_mnist(const RunOptions& options, const FitHooks& hooks = {});

/// Trace options that capture every reset's stack and print it to `out` as a traceback whose
/// frames carry their source line and the upstream file they mirror (from the sources embedded
/// in the binary).
trace::TraceOptions traceback_options(std::ostream& out);

}  // namespace dlreset::app
