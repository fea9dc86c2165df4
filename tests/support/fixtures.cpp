#include "tests/support/fixtures.h"

#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <utility>

#include "harness/data/core/datasets/idx_reader.h"
#include "harness/data/multi_processing_dataloader_iter.h"

namespace dlreset::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/dlreset-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void write_tiny_idx_set(const std::string& dir, const std::string& prefix, std::int64_t count, std::int64_t rows,
                        std::int64_t cols) {
  std::vector<std::uint8_t> pixels;
  std::vector<std::uint8_t> labels;
  for (std::int64_t i = 0; i < count; ++i) {
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        pixels.push_back(static_cast<std::uint8_t>((i + r + c) % 256));
      }
    }
    labels.push_back(static_cast<std::uint8_t>(i % 10));
  }
  data::write_idx_file(dir + "/" + prefix + "-images-idx3-ubyte.gz", {count, rows, cols}, pixels);
  data::write_idx_file(dir + "/" + prefix + "-labels-idx1-ubyte.gz", {count}, labels);
}

std::string fashion_mnist_dir() { return DLRESET_DATA_DIR; }

std::string start_method_name(const ::testing::TestParamInfo<data::StartMethod>& info) {
  return data::to_string(info.param);
}

std::shared_ptr<data::DataLoader> synthetic_loader(std::int64_t size, data::DataLoaderOptions options,
                                                   data::SyntheticDatasetOptions dataset) {
  dataset.size = size;
  return std::make_shared<data::DataLoader>(std::make_shared<data::SyntheticDataset>(dataset), std::move(options));
}

TrainValLoaders synthetic_train_val(std::int64_t train_size, std::int64_t val_size, data::DataLoaderOptions options,
                                    data::SyntheticDatasetOptions dataset) {
  TrainValLoaders loaders;
  options.name = "train";
  loaders.train = synthetic_loader(train_size, options, dataset);
  options.name = "val";
  options.shuffle = false;
  loaders.val = synthetic_loader(val_size, options, dataset);
  return loaders;
}

data::DataLoaderOptions worker_loader_options(const std::string& name, data::StartMethod method, int workers,
                                              bool persistent, std::int64_t batch_size) {
  data::DataLoaderOptions options;
  options.name = name;
  options.batch_size = batch_size;
  options.shuffle = true;
  options.num_workers = workers;
  options.persistent_workers = persistent;
  options.start_method = method;
  return options;
}

TrainValLoaders image_train_val(data::DataLoaderOptions options) {
  options.batch_size = 16;
  options.seed = 3;
  options.shuffle = true;
  data::SyntheticDatasetOptions dataset;
  dataset.sample_shape = {1, 28, 28};
  return synthetic_train_val(128, 64, options, dataset);
}

std::vector<std::int64_t> run_epoch(data::DataLoader& loader) {
  std::vector<std::int64_t> seen;
  auto it = loader.iter();
  auto* base = dynamic_cast<data::BaseDataLoaderIter*>(it.get());
  while (std::optional<data::RawBatch> batch = base->next_raw()) {
    seen.insert(seen.end(), batch->indices.begin(), batch->indices.end());
  }
  return seen;
}

std::vector<std::int64_t> worker_pids(const std::shared_ptr<data::BatchIterator>& it) {
  return dynamic_cast<data::MultiProcessingDataLoaderIter&>(*it).worker_pids();
}

std::vector<std::int64_t> kept_worker_pids(data::DataLoader& loader) {
  auto* it = dynamic_cast<data::MultiProcessingDataLoaderIter*>(loader.iterator().get().get());
  return it != nullptr ? it->worker_pids() : std::vector<std::int64_t>{};
}

}  // namespace dlreset::testing
