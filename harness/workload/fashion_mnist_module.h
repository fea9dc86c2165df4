// The workload every variant runs: a LeNet-sized CNN on 28×28 Fashion-MNIST images.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/lightning/lightning_module.h"

namespace dlreset::workload {

struct WorkloadOptions {
  std::string optimizer = "sgd";  ///< "sgd" (with momentum) or "adam"
  double learning_rate = 0.05;    ///< For adam, 1e-3 is the usual choice.
  double momentum = 0.9;          ///< sgd only
  std::string device = "auto";    ///< auto, cpu or cuda
  /// LibTorch's intra-op threads on CPU. One is fastest on a small machine: on 2 cores a second
  /// thread made an epoch several times slower (`dlreset run --workers 0 --intra-op-threads 2`
  /// against 1), and the DataLoader's workers want the other core.
  int intra_op_threads = 1;
  /// Seeds the weights. On CPU the same seed and the same batches give bit-identical losses.
  std::uint64_t seed = 0;
  /// Set on a rank of a multi-rank job: called every step between backward and the optimizer
  /// step with every gradient flattened into one tensor, which it averages across the ranks in
  /// place (one all-reduce, as DDP's buckets do in pieces), so the parameters stay equal on
  /// every rank. Empty: one process.
  std::function<void(at::Tensor& flat_gradients)> all_reduce_gradients;
};

/// conv(1→6, 5×5, pad 2) → relu → maxpool 2 → conv(6→16, 5×5) → relu → maxpool 2 →
/// fc 400→120 → relu → fc 120→84 → relu → fc 84→10; cross-entropy loss. Batches move to the
/// device with non-blocking copies when they come from pinned memory.
class FashionMnistModule : public lightning::LightningModule {
 public:
  explicit FashionMnistModule(WorkloadOptions options = {});
  ~FashionMnistModule() override;
  /// It owns its layers and optimizer state: one model, held by the trainer.
  FashionMnistModule(const FashionMnistModule&) = delete;
  FashionMnistModule& operator=(const FashionMnistModule&) = delete;

  double training_step(const data::Batch& batch, std::int64_t batch_idx) override;
  double validation_step(const data::Batch& batch, std::int64_t batch_idx) override;
  data::Batch transfer_batch_to_device(data::Batch batch) override;

  bool on_cuda() const;
  const std::string& device_name() const;
  /// Waits for queued GPU work (a no-op on CPU): call it before reading a clock.
  void synchronize() const;
  /// The network's parameters by name ("conv1.weight", "conv1.bias", ... "fc3.bias"), in the
  /// order torch.nn's named_parameters() gives them for the same model. They are the live
  /// tensors the optimizer updates: copy them to keep the initial weights. The oracle test reads
  /// them to compare dlreset's initialisation with real PyTorch's.
  std::vector<std::pair<std::string, at::Tensor>> named_parameters() const;

 private:
  /// Averages the gradients across the ranks through WorkloadOptions::all_reduce_gradients.
  void all_reduce_gradients();

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlreset::workload
