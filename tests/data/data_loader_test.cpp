#include "harness/data/data_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/data/core/errors.h"
#include "harness/data/core/worker/worker_info.h"
#include "harness/data/multi_processing_dataloader_iter.h"
#include "tests/support/fault_dataset.h"
#include "tests/support/fixtures.h"

namespace dlreset::data {
namespace {

using ::dlreset::testing::run_epoch;
using ::dlreset::testing::synthetic_loader;
using ::testing::HasSubstr;

struct LoaderCase {
  int workers;
  StartMethod method;
  bool persistent;
};

std::string case_name(const ::testing::TestParamInfo<LoaderCase>& info) {
  if (info.param.workers == 0) return "main_process";
  return std::string(to_string(info.param.method)) + "_w" + std::to_string(info.param.workers) +
         (info.param.persistent ? "_persistent" : "_fresh");
}

class EveryEpoch : public ::testing::TestWithParam<LoaderCase> {};

TEST_P(EveryEpoch, SeesEverySampleExactlyOnce) {
  const LoaderCase& param = GetParam();
  DataLoaderOptions options;
  options.batch_size = 7;  // 50 samples: 7 full batches and one of 1
  options.shuffle = true;
  options.seed = 11;
  options.num_workers = param.workers;
  options.start_method = param.method;
  options.persistent_workers = param.persistent;
  auto loader = synthetic_loader(50, options);
  EXPECT_EQ(loader->size(), 8);
  std::vector<std::int64_t> all(50);
  std::iota(all.begin(), all.end(), 0);
  std::vector<std::vector<std::int64_t>> orders;
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<std::int64_t> seen = run_epoch(*loader);
    orders.push_back(seen);
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, all) << "epoch " << epoch;
  }
  EXPECT_NE(orders[0], orders[1]) << "a shuffled loader must not repeat its order";
}

INSTANTIATE_TEST_SUITE_P(
    Loaders, EveryEpoch,
    ::testing::Values(LoaderCase{0, StartMethod::fork, false}, LoaderCase{1, StartMethod::thread, false},
                      LoaderCase{2, StartMethod::thread, true}, LoaderCase{3, StartMethod::thread, false},
                      LoaderCase{3, StartMethod::thread, true}, LoaderCase{1, StartMethod::fork, true},
                      LoaderCase{2, StartMethod::fork, false}, LoaderCase{3, StartMethod::fork, false},
                      LoaderCase{3, StartMethod::fork, true}, LoaderCase{1, StartMethod::spawn, false},
                      LoaderCase{2, StartMethod::spawn, true}, LoaderCase{3, StartMethod::spawn, true}),
    case_name);

/// Batches go to the workers in turn (batch b to worker b % 3), so making every sample of
/// worker 0's batches cost some 10^7 draws, and the others none, has workers 1 and 2 finish
/// their batches before worker 0 finishes the one in front of them, round after round.
class InOrderDelivery : public ::testing::TestWithParam<StartMethod> {};

TEST_P(InOrderDelivery, BatchesComeInSendOrderThoughWorkersFinishOutOfOrder) {
  constexpr std::int64_t kSamples = 90;  // 30 batches of 3: 10 rounds of the 3 workers
  DataLoaderOptions options;
  options.batch_size = 3;
  options.num_workers = 3;
  options.start_method = GetParam();
  testing::FaultDatasetOptions dataset;
  dataset.sample_work.assign(kSamples, 0);
  for (std::int64_t i = 0; i < kSamples; ++i) {
    if ((i / options.batch_size) % options.num_workers == 0) dataset.sample_work[i] = 10'000'000;
  }
  auto loader = testing::fault_loader(kSamples, options, dataset);
  auto it = loader->iter();
  std::vector<std::int64_t> seen;
  while (std::optional<Batch> batch = it->next()) {
    seen.insert(seen.end(), batch->indices.begin(), batch->indices.end());
  }
  std::vector<std::int64_t> all(kSamples);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(seen, all);
  const auto& workers = dynamic_cast<MultiProcessingDataLoaderIter&>(*it);
  EXPECT_GE(workers.stats().results_held_for_their_turn, 1)
      << "no worker finished out of order, so the order of delivery was not put to the test";
}

INSTANTIATE_TEST_SUITE_P(StartMethods, InOrderDelivery,
                         ::testing::Values(StartMethod::thread, StartMethod::fork, StartMethod::spawn),
                         testing::start_method_name);

TEST(DataLoader, SameSeedGivesSameOrderWithAnyNumberOfWorkers) {
  std::vector<std::vector<std::int64_t>> orders;
  for (int workers : {0, 2}) {
    DataLoaderOptions options;
    options.batch_size = 4;
    options.shuffle = true;
    options.seed = 5;
    options.num_workers = workers;
    options.start_method = StartMethod::thread;
    auto loader = synthetic_loader(40, options);
    std::vector<std::int64_t> both = run_epoch(*loader);
    const std::vector<std::int64_t> second = run_epoch(*loader);
    both.insert(both.end(), second.begin(), second.end());
    orders.push_back(both);
  }
  EXPECT_EQ(orders[0], orders[1]);
}

TEST(DataLoader, DropLastDropsTheShortBatch) {
  DataLoaderOptions options;
  options.batch_size = 7;
  options.drop_last = true;
  auto loader = synthetic_loader(50, options);
  EXPECT_EQ(loader->size(), 7);
  EXPECT_EQ(run_epoch(*loader).size(), 49u);
}

TEST(DataLoader, CollatesIntoTensorsOfTheSampleShape) {
  DataLoaderOptions options;
  options.batch_size = 4;
  SyntheticDatasetOptions dataset;
  dataset.sample_shape = {1, 2, 3};
  dataset.marker = 9;
  auto loader = synthetic_loader(10, options, dataset);
  auto it = loader->iter();
  std::optional<Batch> batch = it->next();
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->inputs.sizes().vec(), (std::vector<std::int64_t>{4, 1, 2, 3}));
  EXPECT_EQ(batch->targets.sizes().vec(), (std::vector<std::int64_t>{4}));
  EXPECT_EQ(batch->inputs.scalar_type(), at::kFloat);
  EXPECT_EQ(batch->targets.scalar_type(), at::kLong);
  EXPECT_EQ(batch->indices, (IndexBuffer{0, 1, 2, 3}));
  EXPECT_FLOAT_EQ(batch->inputs[2][0][0][0].item<float>(), 2.0f);
  EXPECT_FLOAT_EQ(batch->inputs[2][0][0][1].item<float>(), 9.0f);
  EXPECT_EQ(batch->targets[3].item<std::int64_t>(), 3);
}

std::string option_error(const DataLoaderOptions& options) {
  try {
    synthetic_loader(10, options);
  } catch (const DataLoaderError& e) {
    return e.what();
  }
  return "";
}

TEST(DataLoaderOptions, PersistentWorkersWithoutWorkersIsPyTorchsError) {
  DataLoaderOptions options;
  options.persistent_workers = true;
  EXPECT_THAT(option_error(options), HasSubstr("persistent_workers option needs num_workers > 0"));
}

TEST(DataLoaderOptions, BadValuesAreNamedWithTheirFix) {
  /// One bad setting a case, and what its error must say.
  const std::vector<std::pair<std::function<void(DataLoaderOptions&)>, std::string>> cases = {
      {[](DataLoaderOptions& o) { o.batch_size = 0; }, "batch_size=0"},
      {[](DataLoaderOptions& o) { o.num_workers = -1; }, "num_workers=-1"},
      {[](DataLoaderOptions& o) { o.prefetch_factor = 4; }, "only be specified in multiprocessing"},
      {[](DataLoaderOptions& o) { o.timeout_s = -2; }, "non-negative"},
      {[](DataLoaderOptions& o) {
         o.num_workers = 1;
         o.start_method = StartMethod::spawn;
         o.worker_init_fn = [](int) {};
       },
       "worker_init_fn cannot reach"},
  };
  for (const auto& [make_bad, says] : cases) {
    DataLoaderOptions options;
    make_bad(options);
    EXPECT_THAT(option_error(options), HasSubstr(says));
  }
}

TEST(WorkerInfo, EachWorkerSeesItsOwnIdAndSeedBasePlusId) {
  std::mutex mutex;
  std::vector<std::pair<int, std::uint64_t>> seen;
  DataLoaderOptions options;
  options.num_workers = 3;
  options.start_method = StartMethod::thread;
  options.worker_init_fn = [&](int worker_id) {
    const WorkerInfo* info = get_worker_info();
    std::lock_guard<std::mutex> lock(mutex);
    seen.emplace_back(worker_id, info != nullptr ? info->seed : 0);
    EXPECT_EQ(info->id, worker_id);
    EXPECT_EQ(info->num_workers, 3);
  };
  auto loader = synthetic_loader(30, options);
  run_epoch(*loader);
  EXPECT_EQ(get_worker_info(), nullptr) << "the main thread is no worker";
  std::sort(seen.begin(), seen.end());
  ASSERT_EQ(seen.size(), 3u) << "worker_init_fn runs once in each worker";
  EXPECT_EQ(seen[1].second, seen[0].second + 1);
  EXPECT_EQ(seen[2].second, seen[0].second + 2);
}

}  // namespace
}  // namespace dlreset::data
