#include "harness/workload/fashion_mnist_module.h"

#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "harness/workload/device.h"

namespace dlreset::workload {

namespace {

struct NetImpl : torch::nn::Module {
  NetImpl()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 6, 5).padding(2)))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(6, 16, 5)))),
        fc1(register_module("fc1", torch::nn::Linear(16 * 5 * 5, 120))),
        fc2(register_module("fc2", torch::nn::Linear(120, 84))),
        fc3(register_module("fc3", torch::nn::Linear(84, 10))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
    x = x.flatten(1);
    x = torch::relu(fc1->forward(x));
    x = torch::relu(fc2->forward(x));
    return fc3->forward(x);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
  torch::nn::Linear fc3;
};
TORCH_MODULE(Net);

}  // namespace

struct FashionMnistModule::Impl {
  /// The last batches transfer_batch_to_device handed out, by their inputs' tensor: a step takes
  /// only those. On the CPU the transfer moves nothing, so a step on a batch that skipped it
  /// would run here and fail only on a GPU; this way it fails on the CPU too.
  static constexpr std::size_t kTransferred = 4;
  std::array<const void*, kTransferred> transferred{};
  std::size_t next_transferred = 0;

  void check_transferred(const data::Batch& batch, const char* step) const {
    if (batch.inputs.device() != device) {
      throw std::logic_error(std::string("FashionMnistModule::") + step + " got a batch on " +
                             batch.inputs.device().str() + " while the model is on " + device.str() +
                             "; pass it through transfer_batch_to_device first.");
    }
    const void* inputs = batch.inputs.unsafeGetTensorImpl();
    if (std::find(transferred.begin(), transferred.end(), inputs) == transferred.end()) {
      throw std::logic_error(std::string("FashionMnistModule::") + step +
                             " got a batch that did not go through transfer_batch_to_device; on a GPU "
                             "it would be on the wrong device. Pass every batch through it before a step.");
    }
  }

  DeviceChoice device_choice;
  torch::Device device{torch::kCPU};
  Net net{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::function<void(at::Tensor&)> all_reduce_gradients;
};

FashionMnistModule::FashionMnistModule(WorkloadOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.intra_op_threads < 1) {
    throw std::invalid_argument("intra_op_threads must be 1 or more, got " + std::to_string(options.intra_op_threads) +
                                ".");
  }
  if (!(options.learning_rate > 0)) {
    throw std::invalid_argument("The learning rate must be positive, got " + std::to_string(options.learning_rate) +
                                ".");
  }
  impl_->device_choice = resolve_device(options.device);
  impl_->device = impl_->device_choice.cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  // LibTorch's thread count and RNG are process-wide: setting them here is what makes every
  // variant start from the same weights and run at the same speed.
  at::set_num_threads(options.intra_op_threads);
  torch::manual_seed(options.seed);
  impl_->net = Net();
  impl_->net->to(impl_->device);
  if (options.optimizer == "sgd") {
    impl_->optimizer =
        std::make_unique<torch::optim::SGD>(impl_->net->parameters(),
                                            torch::optim::SGDOptions(options.learning_rate).momentum(options.momentum));
  } else if (options.optimizer == "adam") {
    impl_->optimizer = std::make_unique<torch::optim::Adam>(impl_->net->parameters(),
                                                            torch::optim::AdamOptions(options.learning_rate));
  } else {
    throw std::invalid_argument("Unknown optimizer '" + options.optimizer + "'; use sgd or adam.");
  }
  impl_->all_reduce_gradients = std::move(options.all_reduce_gradients);
}

FashionMnistModule::~FashionMnistModule() = default;

bool FashionMnistModule::on_cuda() const { return impl_->device_choice.cuda; }

const std::string& FashionMnistModule::device_name() const { return impl_->device_choice.description; }

void FashionMnistModule::synchronize() const {
  if (on_cuda()) torch::cuda::synchronize();
}

std::vector<std::pair<std::string, at::Tensor>> FashionMnistModule::named_parameters() const {
  std::vector<std::pair<std::string, at::Tensor>> parameters;
  for (const auto& item : impl_->net->named_parameters()) parameters.emplace_back(item.key(), item.value());
  return parameters;
}

data::Batch FashionMnistModule::transfer_batch_to_device(data::Batch batch) {
  if (on_cuda()) {
    // Non-blocking only helps from page-locked memory (the loader's pin_memory).
    batch.inputs = batch.inputs.to(impl_->device, /*non_blocking=*/batch.inputs.is_pinned());
    batch.targets = batch.targets.to(impl_->device, /*non_blocking=*/batch.targets.is_pinned());
  }
  impl_->transferred[impl_->next_transferred++ % Impl::kTransferred] = batch.inputs.unsafeGetTensorImpl();
  return batch;
}

void FashionMnistModule::all_reduce_gradients() {
  std::vector<torch::Tensor> gradients;
  for (const torch::Tensor& parameter : impl_->net->parameters()) gradients.push_back(parameter.grad().view(-1));
  torch::Tensor flat = torch::cat(gradients);
  impl_->all_reduce_gradients(flat);
  std::int64_t offset = 0;
  for (torch::Tensor& gradient : gradients) {
    gradient.copy_(flat.narrow(0, offset, gradient.numel()));
    offset += gradient.numel();
  }
}

double FashionMnistModule::training_step(const data::Batch& batch, std::int64_t /*batch_idx*/) {
  impl_->check_transferred(batch, "training_step");
  impl_->net->train();
  impl_->optimizer->zero_grad();
  torch::Tensor logits = impl_->net->forward(batch.inputs);
  torch::Tensor loss = torch::nn::functional::cross_entropy(logits, batch.targets);
  loss.backward();
  if (impl_->all_reduce_gradients) all_reduce_gradients();
  impl_->optimizer->step();
  // item() copies the loss to the host, which waits for every kernel queued on the stream before
  // it: on CUDA each step returns with its work done, so a clock read after it needs no
  // synchronize() of its own.
  return loss.item<double>();
}

double FashionMnistModule::validation_step(const data::Batch& batch, std::int64_t /*batch_idx*/) {
  impl_->check_transferred(batch, "validation_step");
  torch::NoGradGuard no_grad;
  impl_->net->eval();
  torch::Tensor logits = impl_->net->forward(batch.inputs);
  return torch::nn::functional::cross_entropy(logits, batch.targets).item<double>();
}

}  // namespace dlreset::workload
