// What the Trainer does as Lightning 1.5.0's does: the profiler's actions and their counts, fit
// with nothing to train on, and an exception leaving fit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "harness/profiler/simple_profiler.h"
#include "tests/lightning/probe_module.h"
#include "tests/lightning/short_fit.h"
#include "tests/support/fixtures.h"
#include "variants/fit_report.h"

// The file's own namespace: the suite's files compile together (a unity build), and each names
// its fit's sizes alike.
namespace dlreset::variants::trainer_test {
namespace {

using ::testing::StartsWith;

constexpr int kEpochs = 3;
constexpr std::int64_t kTrainBatches = 4;
constexpr std::int64_t kValBatches = 2;
constexpr std::int64_t kSanitySteps = 2;

lightning::TrainerOptions trainer_options() {
  lightning::TrainerOptions trainer = testing::short_fit(kEpochs, kTrainBatches, kValBatches);
  trainer.num_sanity_val_steps = kSanitySteps;
  return trainer;
}

data::DataLoaderOptions loader_options() {
  data::DataLoaderOptions options;
  options.batch_size = 2;
  options.num_workers = 1;
  options.persistent_workers = true;
  options.start_method = data::StartMethod::thread;
  return options;
}

std::map<std::string, std::int64_t> profiled_calls(Variant variant, std::string* summary) {
  auto [train, val] = testing::synthetic_train_val(32, 16, loader_options());
  profiler::SimpleProfiler profiler;
  lightning::TrainerOptions trainer = trainer_options();
  trainer.profiler = &profiler;
  testing::ProbeModule model;
  run_fit(variant, model, train, val, trainer);
  std::map<std::string, std::int64_t> calls;
  for (const auto& action : profiler.stats()) calls[action.action] = action.calls;
  if (summary != nullptr) *summary = profiler.summary();
  return calls;
}

class TrainerProfiler : public ::testing::TestWithParam<Variant> {};

/// 1.5.0's fetcher opens get_<stage>_batch, and fetch_next_<stage>_batch inside it, for the
/// prefetch in `__iter__` and for every batch after: N + 1 a pass of N batches, the last
/// finding the end. The same workload under real Lightning gave 255 / 55 / 3 for 5 epochs of
/// 50 train and 10 val batches and a 2-batch sanity check.
TEST_P(TrainerProfiler, OpensLightningsActionsAsOftenAsLightningDoes) {
  std::string summary;
  const std::map<std::string, std::int64_t> calls = profiled_calls(GetParam(), &summary);
  const std::int64_t sanity_batches = std::min(kSanitySteps, kValBatches);
  const std::map<std::string, std::int64_t> expected = {
      {"run_training_epoch", kEpochs},
      {"get_train_batch", kEpochs * (kTrainBatches + 1)},
      {"fetch_next_train_batch", kEpochs * (kTrainBatches + 1)},
      {"training_batch_to_device", kEpochs * kTrainBatches},
      {"run_training_batch", kEpochs * kTrainBatches},
      {"get_validate_batch", kEpochs * (kValBatches + 1)},
      {"fetch_next_validate_batch", kEpochs * (kValBatches + 1)},
      {"get_sanity_check_batch", sanity_batches + 1},
      {"fetch_next_sanity_check_batch", sanity_batches + 1},
      {"evaluation_batch_to_device", kEpochs * kValBatches + sanity_batches},
      {"evaluation_step_and_end", kEpochs * kValBatches + sanity_batches},
      {"validation_step", kEpochs * kValBatches + sanity_batches},
  };
  EXPECT_EQ(calls, expected);
  EXPECT_THAT(summary, StartsWith("FIT Profiler Report\n"));
}

INSTANTIATE_TEST_SUITE_P(Variants, TrainerProfiler, ::testing::Values(Variant::buggy, Variant::fixed),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return std::string(to_string(info.param));
                         });

/// limit_train_batches 0: 1.5.0's FitLoop is done before its first epoch, so no train worker
/// starts and no epoch hook runs; the sanity check still does.
TEST(TrainerWithNothingToTrain, RunsNoEpochAndStartsNoTrainWorker) {
  auto [train, val] = testing::synthetic_train_val(32, 16, loader_options());
  lightning::TrainerOptions trainer = trainer_options();
  trainer.limit_train_batches = 0;
  testing::ProbeModule model;
  const FitReport report = run_fit(Variant::buggy, model, train, val, trainer);
  EXPECT_EQ(report.train.counters.worker_spawns, 0);
  EXPECT_EQ(report.train.counters.iterators_created, 0);
  EXPECT_EQ(report.epochs.size(), 0u);
  EXPECT_EQ(report.val.counters.iterators_created, 1);  // the sanity check's
}

/// A module whose training step throws at one batch.
class FailingModule : public testing::ProbeModule {
 public:
  double training_step(const data::Batch& batch, std::int64_t batch_idx) override {
    if (batch_idx == 1) throw std::runtime_error("the training step failed at batch 1");
    return testing::ProbeModule::training_step(batch, batch_idx);
  }
};

class ExceptionCounter : public lightning::Callback {
 public:
  void on_exception(const std::exception& exception) override {
    ++exceptions;
    message = exception.what();
  }
  void on_fit_end() override { ++fit_ends; }
  int exceptions = 0;
  int fit_ends = 0;
  std::string message;
};

/// `_call_and_handle_interrupt`: the on_exception hooks run once, with the exception, which
/// then leaves fit; on_fit_end does not run.
TEST(TrainerException, CallsOnExceptionOnceAndLetsTheExceptionGoOn) {
  auto [train, val] = testing::synthetic_train_val(32, 16, loader_options());
  lightning::TrainerOptions trainer = trainer_options();
  ExceptionCounter counter;
  trainer.callbacks.push_back(&counter);
  FailingModule model;
  EXPECT_THROW(run_fit(Variant::fixed, model, train, val, trainer), std::runtime_error);
  EXPECT_EQ(counter.exceptions, 1);
  EXPECT_EQ(counter.message, "the training step failed at batch 1");
  EXPECT_EQ(counter.fit_ends, 0);
}

}  // namespace
}  // namespace dlreset::variants::trainer_test
