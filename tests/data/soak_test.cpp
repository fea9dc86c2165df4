// Soak: hundreds of epochs on one loader, with persistent workers kept (the fixed behaviour)
// and with the iterator nulled every epoch (Lightning 1.5.0's). Either way nothing may pile
// up: no descriptor, thread, zombie or memory that grows with the number of epochs.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/data/data_loader.h"
#include "harness/lightning/supporters.h"
#include "tests/support/elapsed.h"
#include "tests/support/fixtures.h"
#include "tests/support/process_census.h"

namespace dlreset::data {
namespace {

using ::dlreset::testing::ProcessCensus;
using ::dlreset::testing::run_epoch;
using ::dlreset::testing::synthetic_loader;
using Clock = std::chrono::steady_clock;

/// 200 epochs: far more than any fit here runs, and enough that a leak of
/// one descriptor or a few KiB an epoch shows.
constexpr int kSoakEpochs = 200;
/// Spawned workers cost ~0.5 s each to start (a fresh process that loads LibTorch), so the
/// buggy soak with spawn, which starts two every epoch, runs fewer epochs to keep the suite
/// within its time budget; every other soak runs kSoakEpochs.
constexpr int kBuggySpawnEpochs = 10;
/// Epochs run before the baseline is taken: the first ones allocate the buffers, the event
/// log's first blocks and the allocator's arenas that later epochs reuse.
constexpr int kWarmupEpochs = 5;
/// RSS may grow by at most this fraction over the soak. The event log
/// grows by design (it keeps every worker event until cleared), a few hundred bytes an event.
constexpr double kMaxRssGrowth = 0.05;
constexpr std::int64_t kSamples = 32;

/// AddressSanitizer keeps freed memory in a quarantine (256 MiB by default) to catch
/// use-after-free, so under it RSS grows with every free and says nothing about leaks: the
/// asan preset checks everything else here and leaves RSS to the default build.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kRssIsMeaningful = false;
#else
constexpr bool kRssIsMeaningful = true;
#endif

DataLoaderOptions soak_options(StartMethod method) {
  // Batches of 4, 8 an epoch: small, as the bug report's batch limits.
  return testing::worker_loader_options("soak", method, 2, /*persistent=*/true, /*batch_size=*/4);
}

/// This process's descriptors and mappings of files in /dev/shm: named POSIX shared memory,
/// which a run killed before it unlinked its segments would leave behind. dlreset's slots are
/// memfds and never appear there. (Counting /dev/shm's entries instead would count those of
/// every other program on the machine, torch's among them when the oracle tests run alongside.)
int dev_shm_handles() {
  int handles = 0;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    std::error_code unreadable;
    const std::string target = std::filesystem::read_symlink(it->path(), unreadable).string();
    if (!unreadable && target.rfind("/dev/shm/", 0) == 0) ++handles;
  }
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find(" /dev/shm/") != std::string::npos) ++handles;
  }
  return handles;
}

/// This process's mappings of workers' shared-memory slots (harness/data/core/worker/transport/shared_slots.h).
int slot_mappings() {
  std::ifstream maps("/proc/self/maps");
  int mappings = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("memfd:dlreset-batches") != std::string::npos) ++mappings;
  }
  return mappings;
}

/// What the soak saw, epoch by epoch after the warm-up, counted rather than asserted on the
/// spot so that the report says how often something went wrong, not only that it did.
struct SoakTally {
  int epochs = 0;
  int short_epochs = 0;     ///< Epochs that did not deliver every sample.
  int fd_changes = 0;       ///< Epochs that ended with another count of open fds.
  int thread_changes = 0;   ///< ... of threads.
  int child_changes = 0;    ///< ... of live child processes.
  int zombie_epochs = 0;    ///< Epochs that ended with an unreaped child.
  int pid_changes = 0;      ///< Epochs whose workers were not the previous epoch's.
  int dev_shm_epochs = 0;   ///< Epochs that ended holding something in /dev/shm.
  int mapping_changes = 0;  ///< ... with another count of slot mappings.
  int slot_mappings = 0;    ///< Slot mappings at the baseline.
  std::int64_t rss_start_kib = 0;
  std::int64_t rss_end_kib = 0;
  ProcessCensus baseline;
  double seconds = 0.0;

  double rss_growth() const {
    return static_cast<double>(rss_end_kib - rss_start_kib) / static_cast<double>(rss_start_kib);
  }
};

/// Runs `epochs` epochs after the warm-up; `before_epoch` runs before each (the buggy reset).
template <typename BeforeEpoch>
SoakTally soak(DataLoader& loader, int epochs, BeforeEpoch before_epoch) {
  for (int e = 0; e < kWarmupEpochs; ++e) {
    before_epoch();
    run_epoch(loader);
  }
  SoakTally tally;
  tally.baseline = ProcessCensus::take();
  tally.rss_start_kib = testing::resident_set_kib();
  tally.slot_mappings = slot_mappings();
  std::vector<std::int64_t> previous = testing::kept_worker_pids(loader);
  const auto start = Clock::now();
  for (int e = 0; e < epochs; ++e) {
    before_epoch();
    if (run_epoch(loader).size() != static_cast<std::size_t>(kSamples)) ++tally.short_epochs;
    const std::vector<std::int64_t> pids = testing::kept_worker_pids(loader);
    if (pids != previous) ++tally.pid_changes;
    previous = pids;
    // Joined threads and reaped children may take a moment to leave /proc.
    const ProcessCensus now = testing::wait_for_census(tally.baseline, 1.0);
    if (now.open_fds != tally.baseline.open_fds) ++tally.fd_changes;
    if (now.threads != tally.baseline.threads) ++tally.thread_changes;
    if (now.children != tally.baseline.children) ++tally.child_changes;
    if (now.zombies != 0) ++tally.zombie_epochs;
    if (dev_shm_handles() != 0) ++tally.dev_shm_epochs;
    if (slot_mappings() != tally.slot_mappings) ++tally.mapping_changes;
    ++tally.epochs;
  }
  tally.seconds = testing::seconds_since(start);
  tally.rss_end_kib = testing::resident_set_kib();
  return tally;
}

/// One line a soak, for docs/reliability.md.
void report(const char* what, StartMethod method, const SoakTally& tally, const LoaderCounters& counters) {
  std::printf("soak %s %s: %d epochs in %.1f s; worker spawns %lld, pid changes %d; fds %d, "
              "threads %d, children %d, slot mappings %d at every epoch end (changes: fds %d, "
              "threads %d, children %d, zombie epochs %d, /dev/shm epochs %d, slot mappings %d); "
              "RSS %lld -> %lld KiB (%+.2f%%)\n",
              what, to_string(method), tally.epochs, tally.seconds, static_cast<long long>(counters.worker_spawns),
              tally.pid_changes, tally.baseline.open_fds, tally.baseline.threads, tally.baseline.children,
              tally.slot_mappings, tally.fd_changes, tally.thread_changes, tally.child_changes, tally.zombie_epochs,
              tally.dev_shm_epochs, tally.mapping_changes, static_cast<long long>(tally.rss_start_kib),
              static_cast<long long>(tally.rss_end_kib), 100.0 * tally.rss_growth());
}

/// What neither kind of soak may leave behind, whether its workers lived or were replaced:
/// descriptors, threads, children, zombies, /dev/shm files, mappings or memory.
void expect_nothing_piled_up(const SoakTally& tally, StartMethod method) {
  EXPECT_EQ(tally.fd_changes, 0);
  EXPECT_EQ(tally.thread_changes, 0);
  EXPECT_EQ(tally.child_changes, 0);
  EXPECT_EQ(tally.zombie_epochs, 0);
  EXPECT_EQ(tally.dev_shm_epochs, 0);
  EXPECT_EQ(tally.mapping_changes, 0);
  EXPECT_EQ(tally.slot_mappings, method == StartMethod::thread ? 0 : 2) << "one per worker";
  if (kRssIsMeaningful) {
    EXPECT_LE(tally.rss_growth(), kMaxRssGrowth) << tally.rss_start_kib << " KiB -> " << tally.rss_end_kib << " KiB";
  }
}

class Soak : public ::testing::TestWithParam<StartMethod> {};

TEST_P(Soak, PersistentWorkersLiveThroughTwoHundredEpochsWithoutLeaking) {
  auto loader = synthetic_loader(kSamples, soak_options(GetParam()));
  const SoakTally tally = soak(*loader, kSoakEpochs, [] {});
  const LoaderCounters counters = loader->counters();
  report("persistent", GetParam(), tally, counters);
  EXPECT_EQ(tally.short_epochs, 0);
  EXPECT_EQ(tally.pid_changes, 0) << "persistent workers were replaced";
  EXPECT_EQ(counters.worker_spawns, 2);
  EXPECT_EQ(counters.dataset_loads, 2);
  expect_nothing_piled_up(tally, GetParam());
}

TEST_P(Soak, BuggyResetReplacesTheWorkersEveryEpochWithoutLeaking) {
  const int epochs = GetParam() == StartMethod::spawn ? kBuggySpawnEpochs : kSoakEpochs;
  auto loader = synthetic_loader(kSamples, soak_options(GetParam()));
  // What repro/'s DataFetcher::reset does at the start of every epoch (Lightning 1.5.0).
  const SoakTally tally =
      soak(*loader, epochs, [&] { lightning::CombinedLoader::shutdown_workers_and_reset_iterator(*loader); });
  const LoaderCounters counters = loader->counters();
  report("buggy", GetParam(), tally, counters);
  EXPECT_EQ(tally.short_epochs, 0);
  EXPECT_EQ(counters.worker_spawns, 2 * (kWarmupEpochs + epochs));
  EXPECT_EQ(counters.dataset_loads, 2 * (kWarmupEpochs + epochs));
  EXPECT_EQ(counters.iterator_resets, kWarmupEpochs + epochs - 1);
  if (GetParam() != StartMethod::thread) {
    EXPECT_EQ(tally.pid_changes, epochs) << "the workers were not replaced every epoch";
  }
  expect_nothing_piled_up(tally, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Backends, Soak, ::testing::Values(StartMethod::thread, StartMethod::fork, StartMethod::spawn),
                         testing::start_method_name);

}  // namespace
}  // namespace dlreset::data
