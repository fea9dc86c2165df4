// A dataset of a user's own registers its kind and runs under every start method, spawn
// included: the spawned worker, a fresh run of this test program, rebuilds it by that kind.
#include "harness/data/core/datasets/dataset_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/data/core/datasets/idx_dataset.h"
#include "harness/data/core/datasets/synthetic_dataset.h"
#include "harness/data/core/errors.h"
#include "harness/data/core/worker/worker_info.h"
#include "harness/data/data_loader.h"
#include "tests/support/fixtures.h"

namespace dlreset::data {
namespace {

using ::testing::HasSubstr;

/// Sample i is {i², offset, worker id + 1} with label i % 3: a dataset dlreset knows nothing
/// of. The third feature says which process made the sample: 0 in the main process.
class SquaresDataset : public Dataset {
 public:
  SquaresDataset(std::int64_t size, float offset) : size_(size), offset_(offset) {}

  std::int64_t size() const override { return size_; }
  SampleShape sample_shape() const override { return {3}; }
  std::int64_t get(std::int64_t index, float* features) override {
    if (!loaded_) {
      loaded_ = true;
      record_load(0.0);
    }
    const WorkerInfo* worker = get_worker_info();
    features[0] = static_cast<float>(index * index);
    features[1] = offset_;
    features[2] = worker != nullptr ? static_cast<float>(worker->id + 1) : 0.0f;
    return index % 3;
  }
  std::unique_ptr<Dataset> clone() const override { return std::make_unique<SquaresDataset>(size_, offset_); }
  std::string spec() const override {
    return nlohmann::json{{"kind", "test_squares"}, {"size", size_}, {"offset", offset_}}.dump();
  }

  static std::unique_ptr<SquaresDataset> from_spec(const std::string& text) {
    const nlohmann::json spec = nlohmann::json::parse(text);
    return std::make_unique<SquaresDataset>(spec.at("size").get<std::int64_t>(), spec.at("offset").get<float>());
  }

 private:
  std::int64_t size_;
  float offset_;
  bool loaded_ = false;
};

DLRESET_REGISTER_DATASET("test_squares", SquaresDataset)

/// A kind is known when its dataset's code is linked in, as this program's idx and synthetic
/// datasets and its own are.
TEST(DatasetRegistry, KnowsTheKindsOfTheDatasetsLinkedIntoTheProgram) {
  EXPECT_THAT(DatasetRegistry::global().kinds(), ::testing::IsSupersetOf({"idx", "synthetic", "test_squares"}));
}

/// A spawned worker rebuilds dlreset's own datasets from their spec: every option must come back.
TEST(DatasetRegistry, RebuildsTheBuiltInDatasetsFromTheirSpecWithEveryOption) {
  SyntheticDatasetOptions synthetic;
  synthetic.size = 7;
  synthetic.sample_shape = {2, 3};
  synthetic.num_classes = 4;
  synthetic.marker = 0.375;
  synthetic.load_work = 5;
  const std::unique_ptr<Dataset> rebuilt = DatasetRegistry::global().make(SyntheticDataset(synthetic).spec());
  const SyntheticDatasetOptions& back = dynamic_cast<const SyntheticDataset&>(*rebuilt).options();
  EXPECT_EQ(back.size, 7);
  EXPECT_EQ(back.sample_shape, SampleShape({2, 3}));
  EXPECT_EQ(back.num_classes, 4);
  EXPECT_EQ(back.marker, 0.375);
  EXPECT_EQ(back.load_work, 5);

  testing::TempDir dir;
  testing::write_tiny_idx_set(dir.path(), "tiny", 5);
  IdxDatasetOptions idx;
  idx.images_path = dir.file("tiny-images-idx3-ubyte.gz");
  idx.labels_path = dir.file("tiny-labels-idx1-ubyte.gz");
  idx.mean = 0.25f;
  idx.std = 0.5f;
  const std::unique_ptr<Dataset> idx_rebuilt = DatasetRegistry::global().make(IdxDataset(idx).spec());
  const IdxDatasetOptions& idx_back = dynamic_cast<const IdxDataset&>(*idx_rebuilt).options();
  EXPECT_EQ(idx_back.images_path, idx.images_path);
  EXPECT_EQ(idx_back.labels_path, idx.labels_path);
  EXPECT_EQ(idx_back.mean, 0.25f);
  EXPECT_EQ(idx_back.std, 0.5f);
}

class UserDataset : public ::testing::TestWithParam<StartMethod> {};

TEST_P(UserDataset, RunsInEveryWorkerWithTheSamplesItsSpecDescribes) {
  DataLoaderOptions options;
  options.batch_size = 4;
  options.num_workers = 2;
  options.start_method = GetParam();
  options.persistent_workers = true;
  options.name = "squares";
  DataLoader loader(std::make_shared<SquaresDataset>(10, 0.5f), options);
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<std::int64_t> seen;
    int batches_from_workers[2] = {0, 0};
    auto it = loader.iter();
    while (std::optional<Batch> batch = it->next()) {
      const at::Tensor inputs = batch->inputs.contiguous();
      const float* values = inputs.data_ptr<float>();
      for (std::int64_t row = 0; row < batch->size(); ++row) {
        const std::int64_t index = batch->indices[static_cast<std::size_t>(row)];
        EXPECT_EQ(values[row * 3], static_cast<float>(index * index)) << "sample " << index;
        EXPECT_EQ(values[row * 3 + 1], 0.5f) << "sample " << index;
        EXPECT_EQ(batch->targets[row].item<std::int64_t>(), index % 3) << "sample " << index;
        seen.push_back(index);
      }
      const float worker = values[2];
      ASSERT_TRUE(worker == 1.0f || worker == 2.0f) << "made outside a worker: " << worker;
      ++batches_from_workers[static_cast<int>(worker) - 1];
    }
    EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})) << "epoch " << epoch;
    EXPECT_EQ(batches_from_workers[0], 2) << "epoch " << epoch;
    EXPECT_EQ(batches_from_workers[1], 1) << "epoch " << epoch;
  }
  EXPECT_EQ(loader.counters().worker_spawns, 2);
  EXPECT_EQ(loader.counters().dataset_loads, 2) << "each worker loads its own copy, once";
}

INSTANTIATE_TEST_SUITE_P(StartMethods, UserDataset,
                         ::testing::Values(StartMethod::thread, StartMethod::fork, StartMethod::spawn),
                         testing::start_method_name);

TEST(DatasetRegistry, AnUnknownKindNamesTheKnownOnesAndHowToRegister) {
  try {
    make_dataset(R"({"kind": "hdf5_shards"})");
    FAIL() << "an unknown kind was rebuilt";
  } catch (const DatasetError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Unknown dataset kind 'hdf5_shards'"));
    EXPECT_THAT(e.what(), HasSubstr("'test_squares'"));
    EXPECT_THAT(e.what(), HasSubstr("DLRESET_REGISTER_DATASET"));
  }
  EXPECT_THROW(make_dataset("not json"), DatasetError);
  EXPECT_THROW(make_dataset(R"({"kind": 7})"), DatasetError);
}

TEST(DatasetRegistry, RefusesAKindTwiceAndAnEmptyKind) {
  DatasetRegistry registry;
  const DatasetRegistry::Factory factory = [](const std::string& spec) -> std::unique_ptr<Dataset> {
    return SquaresDataset::from_spec(spec);
  };
  registry.add("test_squares", factory);
  try {
    registry.add("test_squares", factory);
    FAIL() << "a kind was registered twice";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'test_squares' is registered twice"));
  }
  EXPECT_THROW(registry.add("", factory), std::logic_error);
  EXPECT_EQ(registry.kinds(), std::vector<std::string>{"test_squares"});
  const std::unique_ptr<Dataset> rebuilt = registry.make(SquaresDataset(4, 2.0f).spec());
  EXPECT_EQ(rebuilt->size(), 4);
}

}  // namespace
}  // namespace dlreset::data
