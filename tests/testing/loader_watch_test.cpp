// LoaderWatch and its matchers over hand-written loops: what they count, and what a failing
// matcher prints.
#include "harness/testing/loader_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "harness/testing/failure_capture.h"
#include "harness/testing/loader_matchers.h"
#include "harness/trace/traced.h"
#include "tests/support/fixtures.h"

namespace dlreset::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kWorkers = 2;
constexpr int kEpochs = 3;

std::shared_ptr<data::DataLoader> persistent_loader() {
  data::DataLoaderOptions options;
  options.name = "train";
  options.batch_size = 4;
  options.num_workers = kWorkers;
  options.persistent_workers = true;
  options.start_method = data::StartMethod::thread;
  return synthetic_loader(32, options);
}

/// What Lightning 1.5.0 did at the start of every epoch, in a loop of one's own.
DLRESET_TRACED void null_the_iterator_like_lightning_150(data::DataLoader& loader) {
  loader.iterator() = nullptr;
  asm volatile("");  // keep the store from being a tail call
}

void fit_resetting_every_epoch(data::DataLoader& loader) {
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    null_the_iterator_like_lightning_150(loader);
    run_epoch(loader);
  }
}

TEST(LoaderWatch, CountsAPersistentLoaderThatKeepsItsWorkers) {
  const auto loader = persistent_loader();
  LoaderWatch watch(loader);
  for (int epoch = 0; epoch < kEpochs; ++epoch) run_epoch(*loader);
  watch.begin_teardown();
  loader->iterator() = nullptr;

  EXPECT_THAT(watch, SpawnedWorkersOnce());
  EXPECT_THAT(watch, LoadedDatasetTimes(kWorkers));
  EXPECT_THAT(watch, CreatedIteratorsTimes(1));
  EXPECT_THAT(watch, NeverResetBefore(teardown));
  EXPECT_THAT(watch, ResetAtTeardownTimes(1));
  EXPECT_THAT(watch, CalledShutdownTimes(1)) << "the iterator's destructor, once the field let go";
}

TEST(LoaderWatch, CountsALoopThatResetsEveryEpoch) {
  const auto loader = persistent_loader();
  LoaderWatch watch(loader);
  fit_resetting_every_epoch(*loader);

  EXPECT_THAT(watch, SpawnedWorkersTimes(kEpochs * kWorkers));
  EXPECT_THAT(watch, LoadedDatasetTimes(kEpochs * kWorkers));
  EXPECT_THAT(watch, CreatedIteratorsTimes(kEpochs));
  // The first store finds the field empty: only the later two are resets.
  EXPECT_THAT(watch, ResetBeforeTeardownTimes(kEpochs - 1));
  EXPECT_THAT(watch, ResetAtTeardownTimes(0));
  ASSERT_EQ(watch.reset_log().size(), static_cast<std::size_t>(kEpochs - 1));
  EXPECT_THAT(watch.traceback(watch.reset_log()[0]), HasSubstr("::null_the_iterator_like_lightning_150\n"));
}

TEST(LoaderWatch, CountsFromWhenItAttachedWhateverClearsTheEventLog) {
  const auto loader = persistent_loader();
  run_epoch(*loader);
  LoaderWatch watch(loader);
  trace::EventLog::global().clear();
  run_epoch(*loader);
  loader->iterator() = nullptr;
  EXPECT_THAT(watch, SpawnedWorkersTimes(0));
  EXPECT_THAT(watch, CreatedIteratorsTimes(0));
  EXPECT_THAT(watch, ResetBeforeTeardownTimes(1));
}

TEST(LoaderMatchers, ReadAsSentences) {
  EXPECT_EQ(::testing::DescribeMatcher<const LoaderWatch&>(SpawnedWorkersOnce()), "spawned each of its workers once");
  EXPECT_EQ(::testing::DescribeMatcher<const LoaderWatch&>(NeverResetBefore(teardown)),
            "never reset its iterator before teardown");
  EXPECT_EQ(::testing::DescribeMatcher<const LoaderWatch&>(LoadedDatasetTimes(2)), "loaded its dataset 2 times");
  EXPECT_EQ(::testing::DescribeMatcher<const LoaderWatch&>(ResetAtTeardownTimes(1), /*negation=*/true),
            "not: reset its iterator once at teardown");
}

TEST(LoaderMatchers, FailureGivesTheCountExpectedAndSeen) {
  const auto loader = persistent_loader();
  LoaderWatch watch(loader);
  fit_resetting_every_epoch(*loader);
  const std::vector<std::string> failures = failures_reported_by([&] {
    EXPECT_THAT(watch, SpawnedWorkersOnce());
    EXPECT_THAT(watch, LoadedDatasetTimes(kWorkers));
  });
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_THAT(failures[0], HasSubstr("Expected: spawned each of its workers once"));
  EXPECT_THAT(failures[0], HasSubstr("expected 2 worker spawns (2 workers, once each), seen 6"));
  EXPECT_THAT(failures[0], HasSubstr("the watch of loader 'train' (2 workers): 6 worker spawns"));
  EXPECT_THAT(failures[1], HasSubstr("expected 2 dataset loads, seen 6"));
}

TEST(LoaderMatchers, UnexpectedResetsComeWithTheTracebackOfEach) {
  const auto loader = persistent_loader();
  LoaderWatch watch(loader);
  fit_resetting_every_epoch(*loader);
  const std::vector<std::string> failures =
      failures_reported_by([&] { EXPECT_THAT(watch, NeverResetBefore(teardown)); });
  ASSERT_EQ(failures.size(), 1u);
  const std::string& message = failures[0];
  EXPECT_THAT(message, HasSubstr("expected 0 iterator resets before teardown, seen 2"));
  EXPECT_THAT(message, HasSubstr("This traceback is why (reset 1 of 2):\nTraceback (most recent call last), "
                                 "iterator of loader 'train' set to null:\n"));
  EXPECT_THAT(message, HasSubstr("This traceback is why (reset 2 of 2):"));
  EXPECT_THAT(message, HasSubstr("File \"tests/testing/loader_watch_test.cpp\", line "));
  EXPECT_THAT(message, HasSubstr("::null_the_iterator_like_lightning_150\n"));
  EXPECT_THAT(message, Not(HasSubstr("libc-start.c"))) << "system frames are summarized";
}

TEST(FailuresReportedBy, KeepsEachFailureFromTheRunningTest) {
  const std::vector<std::string> failures = failures_reported_by([] {
    EXPECT_EQ(1, 2) << "first";
    ADD_FAILURE() << "second";
    EXPECT_EQ(3, 3);
  });
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_THAT(failures[0], HasSubstr("first"));
  EXPECT_THAT(failures[1], HasSubstr("second"));
  EXPECT_THAT(failures_reported_by([] {}), ElementsAre());
}

}  // namespace
}  // namespace dlreset::testing
