// Small fixtures shared by the test suites: temporary directories, tiny IDX data sets, and
// loaders over synthetic data.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/data/core/datasets/synthetic_dataset.h"
#include "harness/data/data_loader.h"

namespace dlreset::testing {

/// A fresh directory under $TMPDIR, removed with everything in it when this goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Writes `<prefix>-images-idx3-ubyte.gz` and `<prefix>-labels-idx1-ubyte.gz` holding `count`
/// images of rows × cols: pixel (i, r, c) = (i + r + c) % 256, label i % 10.
void write_tiny_idx_set(const std::string& dir, const std::string& prefix, std::int64_t count, std::int64_t rows = 4,
                        std::int64_t cols = 4);

/// The directory of Debian's Fashion-MNIST files.
std::string fashion_mnist_dir();

/// Names a test of a suite parameterised by start method: "thread", "fork" or "spawn".
std::string start_method_name(const ::testing::TestParamInfo<data::StartMethod>& info);

/// A shuffled loader's options: `workers` workers started by `method`, kept across epochs when
/// `persistent`, batches of `batch_size`, and `name` in the event log.
data::DataLoaderOptions worker_loader_options(const std::string& name, data::StartMethod method, int workers,
                                              bool persistent, std::int64_t batch_size);

/// A loader over a SyntheticDataset of `size` samples.
std::shared_ptr<data::DataLoader> synthetic_loader(std::int64_t size, data::DataLoaderOptions options,
                                                   data::SyntheticDatasetOptions dataset = {});

/// A fit's two loaders over SyntheticDatasets, named "train" and "val" as the event log and the
/// reports expect. The training loader keeps `options.shuffle`; the validation loader never
/// shuffles, as Lightning's does not.
struct TrainValLoaders {
  std::shared_ptr<data::DataLoader> train;
  std::shared_ptr<data::DataLoader> val;
};
TrainValLoaders synthetic_train_val(std::int64_t train_size, std::int64_t val_size, data::DataLoaderOptions options,
                                    data::SyntheticDatasetOptions dataset = {});
/// The CNN's small fit: 128 training and 64 validation samples shaped as Fashion-MNIST's
/// (1x28x28), in batches of 16, the training set shuffled with seed 3. `options` says how they
/// are loaded (workers, persistence, pinning, start method); batch, seed and shuffle are set here,
/// so that every CNN test fits the same data.
TrainValLoaders image_train_val(data::DataLoaderOptions options);

/// Runs one epoch on `loader`, returning the dataset indices in the order they came.
std::vector<std::int64_t> run_epoch(data::DataLoader& loader);

/// The worker pids of `it`, an iterator made with workers. Any other iterator throws
/// std::bad_cast, so that a test cannot pass on an empty list by mistake.
std::vector<std::int64_t> worker_pids(const std::shared_ptr<data::BatchIterator>& it);

/// The worker pids of the iterator that `loader` keeps (a persistent loader keeps its one);
/// empty when it keeps none or one without workers.
std::vector<std::int64_t> kept_worker_pids(data::DataLoader& loader);

}  // namespace dlreset::testing
