// Faults in workers: each must give its documented error quickly, never hang, and leave no
// zombie or orphan process, no extra thread and no leaked descriptor behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>

#include "harness/data/data_loader.h"
#include "harness/data/errors.h"
#include "harness/data/multi_processing_dataloader_iter.h"
#include "tests/support/fixtures.h"
#include "tests/support/process_census.h"

namespace dlreset::data {
namespace {

using ::dlreset::testing::ProcessCensus;
using ::dlreset::testing::synthetic_loader;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

/// PyTorch checks worker health every 5 s; a fault must surface within that.
constexpr double kFaultDeadlineS = 5.0;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

DataLoaderOptions worker_options(StartMethod method, int workers) {
  DataLoaderOptions options;
  options.name = "faulty";
  options.batch_size = 2;
  options.num_workers = workers;
  options.start_method = method;
  return options;
}

class AnyBackend : public ::testing::TestWithParam<StartMethod> {};
class ProcessBackend : public ::testing::TestWithParam<StartMethod> {};

std::string method_name(const ::testing::TestParamInfo<StartMethod>& info) {
  return to_string(info.param);
}

void expect_clean(const ProcessCensus& baseline) {
  const ProcessCensus after = testing::wait_for_census(baseline, 3.0);
  EXPECT_EQ(after.zombies, 0);
  EXPECT_EQ(after.children, baseline.children);
  EXPECT_EQ(after.threads, baseline.threads);
  EXPECT_EQ(after.open_fds, baseline.open_fds);
}

TEST_P(AnyBackend, WorkerExceptionIsRaisedInTheMainProcessWithWorkerAndMessage) {
  const ProcessCensus baseline = ProcessCensus::take();
  {
    SyntheticDatasetOptions dataset;
    dataset.throw_at = 5;  // batch 2, which worker 0 serves
    auto loader = synthetic_loader(12, worker_options(GetParam(), 2), dataset);
    auto it = loader->iter();
    ASSERT_TRUE(it->next());
    ASSERT_TRUE(it->next());
    try {
      it->next();
      FAIL() << "the worker's exception was not re-raised";
    } catch (const WorkerError& e) {
      EXPECT_EQ(e.worker_id(), 0);
      EXPECT_EQ(e.original_type(), "std::runtime_error");
      EXPECT_THAT(e.what(), HasSubstr("in DataLoader worker 0"));
      EXPECT_THAT(e.what(), HasSubstr("of loader 'faulty'"));
      EXPECT_THAT(e.what(), HasSubstr("told to fail at sample 5"));
    }
    // The iterator goes on past a failed batch, as PyTorch's does.
    EXPECT_TRUE(it->next());
  }
  expect_clean(baseline);
}

TEST_P(AnyBackend, HungWorkerTimesOutWithPyTorchsMessage) {
  const ProcessCensus baseline = ProcessCensus::take();
  const auto start = Clock::now();
  {
    SyntheticDatasetOptions dataset;
    dataset.hang_at = 0;
    DataLoaderOptions options = worker_options(GetParam(), 1);
    options.timeout_s = 1;
    auto loader = synthetic_loader(8, options, dataset);
    auto it = loader->iter();
    try {
      it->next();
      FAIL() << "no timeout";
    } catch (const DataLoaderTimeoutError& e) {
      EXPECT_THAT(e.what(), HasSubstr("DataLoader timed out after 1 seconds"));
    }
  }  // destroying the iterator must end the hung worker, not wait for it forever
  EXPECT_LT(seconds_since(start), 1.0 + kFaultDeadlineS);
  expect_clean(baseline);
}

TEST_P(ProcessBackend, WorkerKilledMidEpochIsReportedWithItsSignal) {
  const ProcessCensus baseline = ProcessCensus::take();
  std::vector<std::int64_t> pids;
  {
    auto loader = synthetic_loader(40, worker_options(GetParam(), 2));
    auto it = loader->iter();
    ASSERT_TRUE(it->next());
    pids = dynamic_cast<MultiProcessingDataLoaderIter&>(*it).worker_pids();
    ASSERT_EQ(pids.size(), 2u);
    ASSERT_EQ(::kill(static_cast<pid_t>(pids[1]), SIGKILL), 0);
    const auto start = Clock::now();
    try {
      while (it->next()) {
      }
      FAIL() << "the dead worker went unnoticed";
    } catch (const WorkerDiedError& e) {
      EXPECT_EQ(e.pid(), pids[1]);
      EXPECT_EQ(e.signal(), SIGKILL);
      EXPECT_THAT(e.what(), HasSubstr("DataLoader worker (pid " + std::to_string(pids[1]) +
                                      ") exited unexpectedly"));
      EXPECT_THAT(e.what(), HasSubstr("signal 9"));
    }
    EXPECT_LT(seconds_since(start), kFaultDeadlineS);
  }
  EXPECT_TRUE(testing::wait_until_gone(pids, 3.0).empty()) << "orphaned workers";
  expect_clean(baseline);
}

TEST_P(ProcessBackend, WorkerThatCrashesOnASampleIsReported) {
  const ProcessCensus baseline = ProcessCensus::take();
  {
    SyntheticDatasetOptions dataset;
    dataset.crash_at = 2;  // batch 1: worker 1
    auto loader = synthetic_loader(12, worker_options(GetParam(), 2), dataset);
    auto it = loader->iter();
    try {
      while (it->next()) {
      }
      FAIL() << "the crash went unnoticed";
    } catch (const WorkerDiedError& e) {
      EXPECT_EQ(e.worker_id(), 1);
      EXPECT_EQ(e.signal(), SIGKILL);
    }
  }
  expect_clean(baseline);
}

TEST_P(ProcessBackend, ShutdownLeavesNoProcessBehind) {
  const ProcessCensus baseline = ProcessCensus::take();
  std::vector<std::int64_t> pids;
  {
    DataLoaderOptions options = worker_options(GetParam(), 2);
    options.persistent_workers = true;
    auto loader = synthetic_loader(20, options);
    testing::run_epoch(*loader);
    pids = dynamic_cast<MultiProcessingDataLoaderIter&>(*loader->iterator().get()).worker_pids();
  }
  EXPECT_TRUE(testing::wait_until_gone(pids, 3.0).empty());
  expect_clean(baseline);
}

INSTANTIATE_TEST_SUITE_P(Faults, AnyBackend,
                         ::testing::Values(StartMethod::thread, StartMethod::fork, StartMethod::spawn),
                         method_name);
INSTANTIATE_TEST_SUITE_P(Faults, ProcessBackend,
                         ::testing::Values(StartMethod::fork, StartMethod::spawn), method_name);

}  // namespace
}  // namespace dlreset::data
