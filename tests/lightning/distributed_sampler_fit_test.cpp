// Lightning's Trainer under a distributed strategy, one rank at a time (no process group is
// needed to choose the samplers): each rank's loaders are re-made with its DistributedSampler
// shard, as data_loading.py does, and the training sampler's set_epoch runs before each epoch's
// iter(), so every epoch serves the order its set_epoch asked for, in 1.5.0 and in 1.5.1; and
// the vanilla loop does the same as a hand-written DDP script.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/data/distributed_sampler.h"
#include "harness/lightning/supporters.h"
#include "harness/lightning/trainer.h"
#include "tests/support/fixtures.h"
#include "variants/variant.h"

// The file's own namespace: the suite's files compile together (a unity build), and each names
// its fit's sizes alike.
namespace dlreset::variants::distributed_sampler_fit_test {
namespace {

constexpr int kEpochs = 3;
constexpr int kRanks = 2;
constexpr int kWorkers = 2;
constexpr std::int64_t kTrainSize = 40;
constexpr std::int64_t kValSize = 16;
constexpr std::int64_t kBatch = 4;
constexpr std::uint64_t kSeed = 3;

/// Records the dataset indices of every batch each stage hands it, in order.
class RecordingModule : public lightning::LightningModule {
 public:
  double training_step(const data::Batch& batch, std::int64_t) override {
    train.insert(train.end(), batch.indices.begin(), batch.indices.end());
    return 0.0;
  }
  double validation_step(const data::Batch& batch, std::int64_t) override {
    val.insert(val.end(), batch.indices.begin(), batch.indices.end());
    return 0.0;
  }
  std::vector<std::int64_t> train;
  std::vector<std::int64_t> val;
};

struct RankRun {
  std::vector<std::int64_t> train;
  std::vector<std::int64_t> val;
  data::LoaderCounters train_counts;
  data::LoaderCounters val_counts;
};

RankRun fit_rank(Variant variant, int rank) {
  data::DataLoaderOptions options;
  options.batch_size = kBatch;
  options.shuffle = true;
  options.num_workers = kWorkers;
  options.persistent_workers = true;
  options.start_method = data::StartMethod::fork;
  auto [train, val] = testing::synthetic_train_val(kTrainSize, kValSize, options);
  lightning::TrainerOptions trainer_options;
  trainer_options.max_epochs = kEpochs;
  trainer_options.num_sanity_val_steps = 0;
  trainer_options.distributed = lightning::DistributedSamplerKwargs{kRanks, rank, kSeed};
  RecordingModule model;
  const FitLoaders ran = fit(variant, model, train, val, trainer_options);
  RankRun run;
  run.train = model.train;
  run.val = model.val;
  run.train_counts = ran.train->counters();
  run.val_counts = ran.val->counters();
  EXPECT_EQ(train->counters().iterators_created, 0)
      << "the user's loader is replaced, as in Lightning and in a DDP script";
  return run;
}

/// The shard torch's DistributedSampler gives `rank` in `epoch`.
std::vector<std::int64_t> shard(std::int64_t size, int rank, bool shuffle, std::int64_t epoch) {
  data::DistributedSamplerOptions options;
  options.num_replicas = kRanks;
  options.rank = rank;
  options.shuffle = shuffle;
  options.seed = kSeed;
  data::DistributedSampler sampler(size, options);
  sampler.set_epoch(epoch);
  return sampler.epoch_order();
}

class DistributedFit : public ::testing::TestWithParam<Variant> {};

TEST_P(DistributedFit, EachRankTrainsOnItsShardInTheOrderSetEpochAskedFor) {
  std::map<int, RankRun> runs;
  for (int rank = 0; rank < kRanks; ++rank) runs[rank] = fit_rank(GetParam(), rank);
  const std::int64_t per_rank = kTrainSize / kRanks;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    std::set<std::int64_t> covered;
    for (int rank = 0; rank < kRanks; ++rank) {
      const std::vector<std::int64_t>& seen = runs[rank].train;
      ASSERT_EQ(static_cast<std::int64_t>(seen.size()), kEpochs * per_rank) << "rank " << rank;
      const std::vector<std::int64_t> epoch_seen(seen.begin() + epoch * per_rank,
                                                 seen.begin() + (epoch + 1) * per_rank);
      EXPECT_EQ(epoch_seen, shard(kTrainSize, rank, /*shuffle=*/true, epoch)) << "rank " << rank << ", epoch " << epoch;
      covered.insert(epoch_seen.begin(), epoch_seen.end());
    }
    EXPECT_EQ(static_cast<std::int64_t>(covered.size()), kTrainSize)
        << "the ranks' shards of epoch " << epoch << " together cover the dataset";
  }
}

TEST_P(DistributedFit, ValidationShardsAreInOrderAndNeverReshuffled) {
  for (int rank = 0; rank < kRanks; ++rank) {
    const RankRun run = fit_rank(GetParam(), rank);
    std::vector<std::int64_t> expected;
    for (int pass = 0; pass < kEpochs; ++pass) {
      const std::vector<std::int64_t> one = shard(kValSize, rank, /*shuffle=*/false, 0);
      expected.insert(expected.end(), one.begin(), one.end());
    }
    EXPECT_EQ(run.val, expected) << "rank " << rank;
  }
}

/// docs/design.md §5's counts, on each rank of the job: the shard changes nothing in them.
TEST_P(DistributedFit, EachRankSpawnsWhatOneProcessDoes) {
  const bool buggy = GetParam() == Variant::buggy;
  for (int rank = 0; rank < kRanks; ++rank) {
    const RankRun run = fit_rank(GetParam(), rank);
    EXPECT_EQ(run.train_counts.worker_spawns, buggy ? kEpochs * kWorkers : kWorkers) << "rank " << rank;
    // No sanity check here: one validation run after each epoch.
    EXPECT_EQ(run.val_counts.worker_spawns, buggy ? kEpochs * kWorkers : kWorkers) << "rank " << rank;
  }
}

/// Lightning re-makes the loader with every argument of the user's: the pin function too.
TEST(DistributedFitLoaders, TheReMadeLoaderKeepsThePinFunction) {
  data::DataLoaderOptions options;
  options.batch_size = kBatch;
  options.num_workers = 1;
  options.pin_memory = true;
  options.start_method = data::StartMethod::thread;
  auto [train, val] = testing::synthetic_train_val(kTrainSize, kValSize, options);
  std::atomic<int> pinned{0};
  train->set_pin_memory_function([&pinned](data::RawBatch&& raw) {
    ++pinned;
    data::Batch batch;
    batch.indices = std::move(raw.indices);
    return batch;
  });
  lightning::TrainerOptions trainer_options;
  trainer_options.max_epochs = 1;
  trainer_options.num_sanity_val_steps = 0;
  trainer_options.data_fetcher = data_fetcher_factory(Variant::fixed);
  trainer_options.distributed = lightning::DistributedSamplerKwargs{kRanks, 0, kSeed};
  lightning::Trainer trainer(trainer_options);
  RecordingModule model;
  trainer.fit(model, train, val);
  EXPECT_EQ(pinned.load(), kTrainSize / kRanks / kBatch) << "every training batch of the shard, pinned";
}

// vanilla: the hand-written DDP loop, which builds its own DistributedSampler loaders and calls
// set_epoch itself.
INSTANTIATE_TEST_SUITE_P(Variants, DistributedFit,
                         ::testing::Values(Variant::buggy, Variant::fixed, Variant::workaround, Variant::vanilla),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return std::string(to_string(info.param));
                         });

}  // namespace
}  // namespace dlreset::variants::distributed_sampler_fit_test
