#include "app/fashion_fit.h"

#include <cstddef>
#include <memory>

#include "app/embedded_sources.h"
#include "harness/data/core/datasets/idx_dataset.h"
#include "harness/data/data_loader.h"
#include "harness/workload/fashion_mnist_module.h"

namespace dlreset::app {

namespace {

std::shared_ptr<data::DataLoader> fashion_loader(const RunOptions& options, const std::string& split,
                                                 const std::string& name, bool shuffle) {
  data::DataLoaderOptions loader;
  loader.name = name;
  loader.batch_size = options.batch_size;
  loader.shuffle = shuffle;
  loader.num_workers = options.workers;
  loader.persistent_workers = options.persistent_workers && options.workers > 0;
  loader.pin_memory = options.pin_memory;
  loader.start_method = options.start_method;
  loader.seed = options.seed;
  loader.seed_mode = options.seed_mode;
  return std::make_shared<data::DataLoader>(std::shared_ptr<data::Dataset>(data::make_fashion_mnist(options.data_dir,
                                                                                                    split)),
                                            loader);
}

/// Records FashionFit::parameter_digests.
class ParameterDigests : public lightning::Callback {
 public:
  ParameterDigests(const workload::FashionMnistModule& model, std::vector<std::uint64_t>& digests)
      : model_(model), digests_(digests) {}

  void on_train_epoch_end(int /*epoch*/) override {
    std::uint64_t digest = 0xcbf29ce484222325ull;  // FNV-1a
    for (const auto& [name, parameter] : model_.named_parameters()) {
      const at::Tensor host = parameter.detach().to(at::kCPU).contiguous();
      const auto* bytes = static_cast<const unsigned char*>(host.data_ptr());
      for (std::size_t i = 0; i < host.nbytes(); ++i) digest = (digest ^ bytes[i]) * 0x100000001b3ull;
    }
    digests_.push_back(digest);
  }

 private:
  const workload::FashionMnistModule& model_;
  std::vector<std::uint64_t>& digests_;
};

}  // namespace

workload::WorkloadOptions workload_options(const RunOptions& options) {
  workload::WorkloadOptions workload;
  workload.device = options.device;
  workload.optimizer = options.optimizer;
  workload.learning_rate = options.learning_rate;
  workload.intra_op_threads = options.intra_op_threads;
  workload.seed = options.seed;
  return workload;
}

FashionFit fit_fashion_mnist(const RunOptions& options, const FitHooks& hooks) {
  workload::WorkloadOptions workload = workload_options(options);
  workload.all_reduce_gradients = hooks.all_reduce_gradients;
  workload::FashionMnistModule model(workload);

  // The report's validation loader had the same worker settings as its training loader.
  auto train = fashion_loader(options, "train", "train", /*shuffle=*/true);
  auto val = fashion_loader(options, "t10k", "val", /*shuffle=*/false);

  lightning::TrainerOptions trainer;
  trainer.max_epochs = options.epochs;
  trainer.limit_train_batches = options.limit_train_batches;
  trainer.limit_val_batches = options.limit_val_batches;
  trainer.num_sanity_val_steps = options.num_sanity_val_steps;
  trainer.profiler = hooks.profiler;
  trainer.callbacks = hooks.callbacks;
  trainer.distributed = hooks.distributed;
  trainer.reduce_mean = hooks.reduce_mean;
  if (hooks.on_ready) hooks.on_ready(model.device_name());
  FashionFit fit;
  fit.device = model.device_name();
  ParameterDigests digests(model, fit.parameter_digests);
  trainer.callbacks.push_back(&digests);
  fit.report = variants::run_fit(options.variant, model, train, val, trainer);
  return fit;
}

trace::TraceOptions traceback_options(std::ostream& out) {
  trace::TraceOptions options;
  options.capture_stacks = true;
  options.print_to = &out;
  options.mirror = &mirrored_file;
  options.source = &source_line;
  return options;
}

}  // namespace dlreset::app
