// The buggy reset must read like the bug report's traceback: from the loop's run down to the
// function that nulls the loader's iterator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "harness/trace/event_log.h"
#include "tests/lightning/probe_module.h"
#include "tests/lightning/short_fit.h"
#include "tests/support/fixtures.h"
#include "variants/fit_report.h"

namespace dlreset::variants {
namespace {

using ::testing::HasSubstr;

FitReport traced_fit(Variant variant) {
  trace::EventLog& log = trace::EventLog::global();
  const trace::TraceOptions saved = log.trace_options();
  trace::TraceOptions tracing;
  tracing.capture_stacks = true;
  log.set_trace_options(tracing);
  data::DataLoaderOptions options;
  options.batch_size = 4;
  options.num_workers = 1;
  options.persistent_workers = true;
  options.start_method = data::StartMethod::thread;
  auto [train, val] = testing::synthetic_train_val(32, 16, options);
  lightning::TrainerOptions trainer = testing::short_fit(2, 2, 2);
  testing::ProbeModule model;
  FitReport report = run_fit(variant, model, train, val, trainer);
  log.set_trace_options(saved);
  return report;
}

/// The index of the first frame at or after `from` whose function contains `needle`.
std::size_t find_frame(const std::vector<trace::StackFrame>& frames, const std::string& needle, std::size_t from) {
  for (std::size_t i = from; i < frames.size(); ++i) {
    if (frames[i].function.find(needle) != std::string::npos) return i;
  }
  return frames.size();
}

void expect_frames_in_order(const std::vector<trace::StackFrame>& frames,
                            const std::vector<std::string>& inner_to_outer) {
  std::size_t at = 0;
  for (const std::string& needle : inner_to_outer) {
    const std::size_t found = find_frame(frames, needle, at);
    ASSERT_LT(found, frames.size()) << "no frame " << needle << " after frame " << at;
    at = found + 1;
  }
}

const trace::Event* first_reset(const FitReport& report, const std::string& loader, const std::string& phase) {
  for (const trace::Event& event : report.events) {
    if (event.kind == trace::EventKind::iterator_reset && event.loader == loader && event.phase == phase) {
      return &event;
    }
  }
  return nullptr;
}

TEST(BuggyResetTrace, TrainResetReadsLikeTheBugReport) {
  const FitReport report = traced_fit(Variant::buggy);
  const trace::Event* reset = first_reset(report, "train", "fit");
  ASSERT_NE(reset, nullptr);
  EXPECT_EQ(reset->epoch, 1);
  ASSERT_TRUE(reset->stack);
  expect_frames_in_order(reset->stack->frames(),
                         {"CombinedLoader::shutdown_workers_and_reset_iterator", "apply_to_collection",
                          "CombinedLoader::reset", "repro::DataFetcher::reset", "AbstractDataFetcher::iter",
                          "update_dataloader_iter", "TrainingEpochLoop::on_run_start", "Loop::run", "FitLoop::advance",
                          "Loop::run", "Trainer::run_train", "Trainer::run_stage", "TrainingTypePlugin::start_training",
                          "Trainer::dispatch", "Trainer::run", "Trainer::fit_impl",
                          "Trainer::call_and_handle_interrupt", "Trainer::fit"});
}

TEST(BuggyResetTrace, ValidationResetComesFromTheEvaluationEpochLoop) {
  const FitReport report = traced_fit(Variant::buggy);
  const trace::Event* reset = first_reset(report, "val", "fit");
  ASSERT_NE(reset, nullptr);
  EXPECT_EQ(reset->stage, "validate");
  ASSERT_TRUE(reset->stack);
  expect_frames_in_order(reset->stack->frames(),
                         {"CombinedLoader::shutdown_workers_and_reset_iterator", "repro::DataFetcher::reset",
                          "AbstractDataFetcher::iter", "update_dataloader_iter", "EvaluationEpochLoop::on_run_start",
                          "Loop::run", "EvaluationLoop::advance", "Loop::run", "TrainingEpochLoop::run_validation"});
}

TEST(FixedResetTrace, OnlyTeardownNullsTheIterators) {
  const FitReport report = traced_fit(Variant::fixed);
  EXPECT_EQ(first_reset(report, "train", "fit"), nullptr);
  EXPECT_EQ(first_reset(report, "val", "fit"), nullptr);
  const trace::Event* reset = first_reset(report, "train", "teardown");
  ASSERT_NE(reset, nullptr);
  ASSERT_TRUE(reset->stack);
  expect_frames_in_order(reset->stack->frames(),
                         {"CombinedLoader::shutdown_workers_and_reset_iterator", "fixed::DataFetcher::teardown",
                          "DataConnector::teardown", "Trainer::post_dispatch", "Trainer::run", "Trainer::fit"});
}

TEST(ResetTraceFrames, AreProjectFilesWithLines) {
  const FitReport report = traced_fit(Variant::buggy);
  const trace::Event* reset = first_reset(report, "train", "fit");
  ASSERT_NE(reset, nullptr);
  const auto frames = reset->stack->frames();
  const std::size_t at = find_frame(frames, "repro::DataFetcher::reset", 0);
  ASSERT_LT(at, frames.size());
  EXPECT_EQ(frames[at].file, "repro/fetching.cpp");
  EXPECT_GT(frames[at].line, 0);
}

}  // namespace
}  // namespace dlreset::variants
