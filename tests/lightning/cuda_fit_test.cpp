// The identical workload on a GPU: with a CUDA device, the buggy and the fixed variant train the
// CNN there on batches pinned by the loaders' pin-memory threads while fork workers run
// beside a live CUDA context, and the workers are spawned and the iterators nulled exactly as on
// the CPU (docs/design.md §5). Skipped where LibTorch sees no GPU: Debian's libtorch-dev is built without
// CUDA. ci/gpu.sh runs it on the GPU machine with the rest of the regression suite.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <cmath>
#include <cstddef>
#include <utility>

#include "harness/workload/fashion_mnist_module.h"
#include "tests/lightning/short_fit.h"
#include "tests/support/fixtures.h"
#include "variants/fit_report.h"

namespace dlreset::variants {
namespace {

constexpr int kEpochs = 3;
constexpr int kWorkers = 2;

/// The real module, counting what reaches the device: every batch should leave the loader
/// pinned and arrive on the GPU.
class DeviceProbe : public workload::FashionMnistModule {
 public:
  using FashionMnistModule::FashionMnistModule;

  data::Batch transfer_batch_to_device(data::Batch batch) override {
    ++batches;
    if (batch.inputs.is_pinned() && batch.targets.is_pinned()) ++pinned;
    data::Batch moved = FashionMnistModule::transfer_batch_to_device(std::move(batch));
    if (moved.inputs.is_cuda() && moved.targets.is_cuda()) ++on_device;
    return moved;
  }

  int batches = 0;
  int pinned = 0;
  int on_device = 0;
};

FitReport fit_on_cuda(Variant variant, DeviceProbe& model) {
  data::DataLoaderOptions options;
  options.num_workers = kWorkers;
  options.persistent_workers = true;
  options.pin_memory = true;
  options.start_method = data::StartMethod::fork;
  auto [train, val] = testing::image_train_val(options);
  lightning::TrainerOptions trainer = testing::short_fit(kEpochs, 4, 2);
  return run_fit(variant, model, train, val, trainer);
}

workload::WorkloadOptions on_cuda() {
  workload::WorkloadOptions options;
  options.device = "cuda";
  options.seed = 7;
  return options;
}

TEST(CudaFit, BuggyAndFixedTrainOnTheGpuFromPinnedBatchesAndSpawnAsOnTheCpu) {
  if (!torch::cuda::is_available()) {
    GTEST_SKIP() << "LibTorch sees no CUDA device here (Debian's libtorch-dev has no CUDA); "
                    "ci/gpu.sh runs this test on a GPU machine.";
  }
  FitReport reports[2];
  const Variant variants[2] = {Variant::buggy, Variant::fixed};
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(to_string(variants[i]));
    DeviceProbe model(on_cuda());
    ASSERT_TRUE(model.on_cuda());
    reports[i] = fit_on_cuda(variants[i], model);
    const FitReport& report = reports[i];
    EXPECT_GT(model.batches, 0);
    EXPECT_EQ(model.pinned, model.batches) << "batches should leave the loader in pinned memory";
    EXPECT_EQ(model.on_device, model.batches) << "batches should reach the GPU";

    const bool buggy = variants[i] == Variant::buggy;
    EXPECT_EQ(report.train.counters.worker_spawns, buggy ? kEpochs * kWorkers : kWorkers);
    EXPECT_EQ(report.val.counters.worker_spawns, buggy ? (kEpochs + 1) * kWorkers : kWorkers);
    EXPECT_EQ(report.train.resets_during_fit, buggy ? kEpochs - 1 : 0);
    EXPECT_EQ(report.val.resets_during_fit, buggy ? kEpochs : 0);
    ASSERT_EQ(report.epochs.size(), static_cast<std::size_t>(kEpochs));
    for (std::size_t epoch = 0; epoch < report.epochs.size(); ++epoch) {
      EXPECT_TRUE(std::isfinite(report.epochs[epoch].train_loss)) << "epoch " << epoch;
      EXPECT_TRUE(std::isfinite(report.epochs[epoch].val_loss)) << "epoch " << epoch;
    }
  }
  // The same samples in the same order; losses are not compared, since cuDNN's kernels need not
  // be bit-reproducible from run to run.
  for (std::size_t epoch = 0; epoch < static_cast<std::size_t>(kEpochs); ++epoch) {
    EXPECT_EQ(reports[0].epochs[epoch].train_order_digest, reports[1].epochs[epoch].train_order_digest)
        << "epoch " << epoch;
  }
}

}  // namespace
}  // namespace dlreset::variants
