// The test Lightning 1.5.0 should have had, written for a loop of one's own: no worker respawn
// across epochs. The second test shows the matcher catching a loop that resets its iterator
// every epoch, and checks what it prints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dlreset/testing.h"
#include "own_loop.h"

namespace own_loop {
namespace {

using ::testing::HasSubstr;
using namespace dlreset::testing;

constexpr int kWorkers = 2;
constexpr int kEpochs = 3;

TEST(OwnLoop, KeepsItsWorkersAcrossEpochs) {
  OwnLoop loop({kEpochs, kWorkers, /*reset_iterator_each_epoch=*/false});
  LoaderWatch watch(loop.train_loader());
  loop.fit();
  watch.begin_teardown();
  loop.teardown();

  EXPECT_THAT(watch, SpawnedWorkersOnce());
  EXPECT_THAT(watch, LoadedDatasetTimes(kWorkers));
  EXPECT_THAT(watch, NeverResetBefore(teardown));
  EXPECT_THAT(watch, ResetAtTeardownTimes(1));
}

TEST(OwnLoop, MatcherCatchesALoopThatResetsItsIteratorEachEpoch) {
  OwnLoop loop({kEpochs, kWorkers, /*reset_iterator_each_epoch=*/true});
  LoaderWatch watch(loop.train_loader());
  loop.fit();

  const std::vector<std::string> failures = failures_reported_by([&] {
    EXPECT_THAT(watch, SpawnedWorkersOnce());
    EXPECT_THAT(watch, NeverResetBefore(teardown));
  });
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_THAT(failures[0], HasSubstr("Expected: spawned each of its workers once"));
  EXPECT_THAT(failures[0], HasSubstr("expected 2 worker spawns (2 workers, once each), seen 6"));
  EXPECT_THAT(failures[1], HasSubstr("Expected: never reset its iterator before teardown"));
  EXPECT_THAT(failures[1], HasSubstr("expected 0 iterator resets before teardown, seen 2"));
  EXPECT_THAT(failures[1], HasSubstr("This traceback is why (reset 1 of 2):\n"
                                     "Traceback (most recent call last), iterator of loader "
                                     "'train' set to null:\n"));
  // The frame that did it, in this project's own source.
  EXPECT_THAT(failures[1], HasSubstr("own_loop.cpp\", line "));
  EXPECT_THAT(failures[1], HasSubstr("in own_loop::OwnLoop::start_epoch\n"));
  EXPECT_THAT(failures[1], HasSubstr("This traceback is why (reset 2 of 2):\n"));
}

}  // namespace
}  // namespace own_loop
