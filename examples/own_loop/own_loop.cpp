// The example's training loop: a linear classifier, SGD, dlreset's DataLoader with fork workers.
#include "own_loop.h"

#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include <optional>

#include "dlreset/data/datasets/synthetic_dataset.h"

namespace own_loop {

OwnLoop::OwnLoop(OwnLoopOptions options) : options_(options) {
  dlreset::data::SyntheticDatasetOptions dataset;
  dataset.size = 256;
  dlreset::data::DataLoaderOptions loader;
  loader.name = "train";
  loader.batch_size = 32;
  loader.shuffle = true;
  loader.num_workers = options_.workers;
  loader.persistent_workers = true;
  loader.start_method = dlreset::data::StartMethod::fork;
  loader_ =
      std::make_shared<dlreset::data::DataLoader>(std::make_shared<dlreset::data::SyntheticDataset>(dataset), loader);
}

void OwnLoop::start_epoch() {
  if (options_.reset_iterator_each_epoch) {
    loader_->iterator() = nullptr;
    asm volatile("");  // keep the store from being a tail call
  }
}

double OwnLoop::fit() {
  torch::nn::Linear model(16, 10);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05));
  double mean_loss = 0.0;
  for (int epoch = 0; epoch < options_.epochs; ++epoch) {
    start_epoch();
    double total = 0.0;
    int batches = 0;
    const auto batches_of_epoch = loader_->iter();
    while (std::optional<dlreset::data::Batch> batch = batches_of_epoch->next()) {
      optimizer.zero_grad();
      const at::Tensor logits = model->forward(batch->inputs.flatten(1));
      const at::Tensor loss = at::nll_loss(at::log_softmax(logits, 1), batch->targets);
      loss.backward();
      optimizer.step();
      total += loss.item<double>();
      ++batches;
    }
    mean_loss = total / batches;
  }
  return mean_loss;
}

void OwnLoop::teardown() { loader_->iterator() = nullptr; }

}  // namespace own_loop
