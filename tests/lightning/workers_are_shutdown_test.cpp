// Lightning's own regression test for the fix, ported: tests/lightning/test_loops.py @ 1.5.1,
// test_workers_are_shutdown. Train and val loaders over 64 samples, batch size 1, one worker,
// limit_train_batches=2, limit_val_batches=2, max_epochs=3, sanity check on. It counts every
// call of the iterator's shutdown_workers, including calls that find nothing to do.
#include <gtest/gtest.h>

#include "tests/lightning/probe_module.h"
#include "tests/lightning/short_fit.h"
#include "tests/support/fixtures.h"
#include "variants/fit_report.h"

namespace dlreset::variants {
namespace {

FitReport lightning_scenario(Variant variant, bool persistent_workers) {
  data::DataLoaderOptions options;
  options.batch_size = 1;
  options.num_workers = 1;
  options.persistent_workers = persistent_workers;
  auto [train, val] = testing::synthetic_train_val(64, 64, options);
  lightning::TrainerOptions trainer = testing::short_fit(3, 2, 2);
  testing::ProbeModule model;
  return run_fit(variant, model, train, val, trainer);
}

class WorkersAreShutdown : public ::testing::TestWithParam<bool> {};

TEST_P(WorkersAreShutdown, FixedShutsDownAsLightning151Asserts) {
  const bool persistent = GetParam();
  const FitReport report = lightning_scenario(Variant::fixed, persistent);
  EXPECT_EQ(report.train.counters.shutdown_calls, persistent ? 2 : 3);
  EXPECT_EQ(report.val.counters.shutdown_calls, persistent ? 2 : 4);
  EXPECT_TRUE(report.train.iterator_null_at_end);
  EXPECT_TRUE(report.val.iterator_null_at_end);
}

TEST_P(WorkersAreShutdown, BuggyShutsDownTwiceForEveryIteratorItBuilt) {
  const bool persistent = GetParam();
  const FitReport report = lightning_scenario(Variant::buggy, persistent);
  // With persistent workers 1.5.0 builds an iterator per pass (3 train, 4 val) and each is
  // shut down twice: explicitly by shutdown_workers_and_reset_iterator, and by its destructor
  // once the field lets go. Without, the field is always null and only destructors call it.
  EXPECT_EQ(report.train.counters.shutdown_calls, persistent ? 6 : 3);
  EXPECT_EQ(report.val.counters.shutdown_calls, persistent ? 8 : 4);
  EXPECT_EQ(report.train.counters.iterators_created, 3);
  EXPECT_EQ(report.val.counters.iterators_created, 4);
  EXPECT_TRUE(report.train.iterator_null_at_end);
  EXPECT_TRUE(report.val.iterator_null_at_end);
}

INSTANTIATE_TEST_SUITE_P(LightningTestLoops, WorkersAreShutdown, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "persistent_workers" : "fresh_workers";
                         });

}  // namespace
}  // namespace dlreset::variants
