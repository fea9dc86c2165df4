// The regression gate: docs/design.md §5's table of worker spawns and iterator resets, for every
// variant, back-end and worker count. The repro must keep reproducing: if `buggy` stops
// resetting, these tests fail too.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tests/lightning/probe_module.h"
#include "tests/lightning/short_fit.h"
#include "tests/support/fixtures.h"
#include "variants/fit_report.h"

// The file's own namespace: the suite's files compile together (a unity build), and each names
// its fit's sizes alike.
namespace dlreset::variants::fit_counts_test {
namespace {

constexpr int kEpochs = 3;

struct FitCase {
  Variant variant;
  data::StartMethod method;
  int workers;
};

std::string case_name(const ::testing::TestParamInfo<FitCase>& info) {
  return std::string(to_string(info.param.variant)) + "_" + data::to_string(info.param.method) + "_w" +
         std::to_string(info.param.workers);
}

FitReport fit_case(const FitCase& param, bool persistent) {
  data::DataLoaderOptions options;
  options.batch_size = 4;
  options.num_workers = param.workers;
  options.persistent_workers = persistent;
  options.start_method = param.method;
  data::SyntheticDatasetOptions dataset;
  dataset.load_work = 10000;
  options.shuffle = true;
  auto [train, val] = testing::synthetic_train_val(64, 32, options, dataset);
  lightning::TrainerOptions trainer = testing::short_fit(kEpochs, 4, 3);
  trainer.num_sanity_val_steps = 2;
  testing::ProbeModule model;
  return run_fit(param.variant, model, train, val, trainer);
}

/// The samples and order every variant must train on: a vanilla loop on one thread worker, fit
/// once per test process.
const FitReport& reference_fit() {
  static const FitReport reference = fit_case({Variant::vanilla, data::StartMethod::thread, 1}, /*persistent=*/true);
  return reference;
}

/// Same samples, same order, epoch by epoch: the variants differ in speed, never in results.
void expect_reference_order(const FitReport& report) {
  const FitReport& reference = reference_fit();
  ASSERT_EQ(report.epochs.size(), static_cast<std::size_t>(kEpochs));
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    EXPECT_EQ(report.epochs[epoch].train_order_digest, reference.epochs[epoch].train_order_digest) << "epoch " << epoch;
    EXPECT_EQ(report.epochs[epoch].train_samples, 16) << "epoch " << epoch;
    EXPECT_EQ(report.epochs[epoch].val_batches, 3) << "epoch " << epoch;
  }
  EXPECT_NE(report.epochs[0].train_order_digest, report.epochs[1].train_order_digest)
      << "the shuffle did not change between epochs";
}

/// The loader's counters and the event log record the same facts, each at one place; they must
/// agree, loader by loader.
void expect_events_agree_with_counters(const FitReport& report) {
  for (const auto& [name, loader] : {std::pair{"train", &report.train}, std::pair{"val", &report.val}}) {
    std::int64_t spawns = 0;
    std::int64_t loads = 0;
    std::int64_t resets = 0;
    for (const trace::Event& event : report.events) {
      if (event.loader != name) continue;
      spawns += event.kind == trace::EventKind::worker_spawn;
      loads += event.kind == trace::EventKind::dataset_loaded;
      resets += event.kind == trace::EventKind::iterator_reset;
    }
    EXPECT_EQ(spawns, loader->counters.worker_spawns) << name << ": spawn events";
    EXPECT_EQ(loads, loader->counters.dataset_loads) << name << ": dataset_loaded events";
    EXPECT_EQ(resets, loader->counters.iterator_resets) << name << ": iterator_reset events";
  }
}

/// One fit per test: each fit is checked for everything the table says of it.
class FitCounts : public ::testing::TestWithParam<FitCase> {};

TEST_P(FitCounts, PersistentWorkersSpawnAndAreNulledAsTheTableSays) {
  const FitCase& param = GetParam();
  const int w = param.workers;
  const bool buggy = param.variant == Variant::buggy;
  const FitReport report = fit_case(param, /*persistent=*/true);
  if (buggy) {
    EXPECT_EQ(report.train.counters.worker_spawns, kEpochs * w) << "train: re-spawned every epoch";
    EXPECT_EQ(report.val.counters.worker_spawns, (kEpochs + 1) * w)
        << "val: re-spawned for every validation and the sanity check";
  } else {
    EXPECT_EQ(report.train.counters.worker_spawns, w) << "train: spawned once";
    EXPECT_EQ(report.val.counters.worker_spawns, w) << "val: spawned once";
  }
  // Every worker loads its own copy of the dataset once: loads follow spawns.
  EXPECT_EQ(report.train.counters.dataset_loads, report.train.counters.worker_spawns);
  EXPECT_EQ(report.val.counters.dataset_loads, report.val.counters.worker_spawns);

  EXPECT_EQ(report.train.resets_during_fit, buggy ? kEpochs - 1 : 0);
  EXPECT_EQ(report.val.resets_during_fit, buggy ? kEpochs : 0);
  // Lightning's teardown nulls each iterator once more; the vanilla loop has no teardown.
  const int at_teardown = param.variant == Variant::vanilla ? 0 : 1;
  EXPECT_EQ(report.train.resets_at_teardown, at_teardown);
  EXPECT_EQ(report.val.resets_at_teardown, at_teardown);
  EXPECT_EQ(report.train.counters.iterator_resets, report.train.resets_during_fit + report.train.resets_at_teardown);
  EXPECT_EQ(report.val.counters.iterator_resets, report.val.resets_during_fit + report.val.resets_at_teardown);

  expect_events_agree_with_counters(report);
  expect_reference_order(report);
}

TEST_P(FitCounts, FreshWorkersAreSpawnedForEveryPassWhateverTheVariant) {
  const FitCase& param = GetParam();
  const int w = param.workers;
  const FitReport report = fit_case(param, /*persistent=*/false);
  EXPECT_EQ(report.train.counters.worker_spawns, kEpochs * w);
  // The vanilla loop runs no sanity check: one validation pass fewer.
  const int val_passes = param.variant == Variant::vanilla ? kEpochs : kEpochs + 1;
  EXPECT_EQ(report.val.counters.worker_spawns, val_passes * w);
  EXPECT_EQ(report.train.counters.dataset_loads, report.train.counters.worker_spawns);
  EXPECT_EQ(report.val.counters.dataset_loads, report.val.counters.worker_spawns);
  EXPECT_EQ(report.train.counters.iterator_resets, 0) << "a fresh iterator never sits in the field";
  EXPECT_EQ(report.val.counters.iterator_resets, 0);
  expect_events_agree_with_counters(report);
  expect_reference_order(report);
}

std::vector<FitCase> all_cases() {
  std::vector<FitCase> cases;
  for (Variant variant : all_variants()) {
    for (data::StartMethod method : {data::StartMethod::thread, data::StartMethod::fork}) {
      for (int workers : {1, 2}) cases.push_back({variant, method, workers});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Variants, FitCounts, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace dlreset::variants::fit_counts_test
