// GoogleTest matchers over a LoaderWatch: the regression gate's counts, read as sentences.
#pragma once

#include <gmock/gmock.h>

#include <cstdint>

#include "harness/testing/loader_watch.h"

namespace dlreset::testing {

/// `EXPECT_THAT(watch, SpawnedWorkersOnce())`. On failure each prints the count expected and
/// the count seen; the reset matchers add the traceback of every reset in the phase they
/// count, so the failure says who reset the iterator, not only how often.
using LoaderMatcher = ::testing::Matcher<const LoaderWatch&>;

/// Each of the loader's workers was started once: worker spawns == num_workers.
LoaderMatcher SpawnedWorkersOnce();
LoaderMatcher SpawnedWorkersTimes(std::int64_t times);
/// Dataset loads, in the main process or any worker; a worker loads its copy once.
LoaderMatcher LoadedDatasetTimes(std::int64_t times);
LoaderMatcher CreatedIteratorsTimes(std::int64_t times);
/// shutdown_workers() calls, including those that found nothing to do.
LoaderMatcher CalledShutdownTimes(std::int64_t times);
/// No reset of the persistent iterator while the loader was in use.
LoaderMatcher NeverResetBefore(Teardown);
LoaderMatcher ResetBeforeTeardownTimes(std::int64_t times);
LoaderMatcher ResetAtTeardownTimes(std::int64_t times);

}  // namespace dlreset::testing
