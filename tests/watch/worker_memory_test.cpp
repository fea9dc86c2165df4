// The memory checks on made-up samples: the largest worker's PSS and the most the workers held
// together (worker_memory), and the fork workers whose private memory grew while their shared
// memory fell (copy_on_read); a worker that only allocates, one that grew too little, and a
// spawn worker are not copies. And smaps_rollup's text, and the sampler on this process's own.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/watch/made_up_tree.h"
#include "watch/analysis/findings.h"
#include "watch/analysis/generations.h"
#include "watch/analysis/python_view.h"
#include "watch/analysis/worker_classifier.h"
#include "watch/tree/memory_sampler.h"

namespace dlreset::watch {
namespace {

using ::testing::HasSubstr;

constexpr std::uint64_t kMiB = 1024 * 1024;

MemoryUse use(std::uint64_t pss_mib, std::uint64_t private_mib, std::uint64_t shared_mib) {
  return {pss_mib * kMiB, private_mib * kMiB, shared_mib * kMiB};
}

/// The program and its fork workers 101 and 102, alive from 1 s to 9 s, with one whole tick of
/// memory a second: `samples[i]` holds each worker's at tick i, the program's 300 MiB throughout.
struct Samples {
  std::vector<MemoryUse> first_worker;
  std::vector<MemoryUse> second_worker;
};

struct Found {
  WatchResult result;
  Findings findings;
  const Check& check(const char* name) const { return findings.check(name); }
};

Found find(const Samples& samples, double interval_s = 1.0, WorkerStart start = WorkerStart::fork) {
  std::vector<ProcessRecord> records = {program(), fork_of(101, 1.0, 9.0), fork_of(102, 1.0, 9.0)};
  classify_processes(records);
  for (ProcessRecord& record : records) {
    if (record.role == ProcessRole::worker) record.start = start;
  }
  const GenerationReport generations = find_generations(records);
  Found found;
  found.result.processes = records;
  found.result.memory.interval_s = interval_s;
  for (std::size_t i = 0; i < samples.first_worker.size(); ++i) {
    MemoryTick tick;
    tick.time_s = 1.5 + static_cast<double>(i);
    tick.members = {{kProgram, use(300, 200, 100)}, {101, samples.first_worker[i]}};
    if (i < samples.second_worker.size()) tick.members.emplace_back(102, samples.second_worker[i]);
    found.result.memory.ticks.push_back(tick);
  }
  const PythonView python = analyse_python("on", {}, 0, records, generations, "/usr/share/dlreset/python");
  found.findings = analyse_findings(found.result, generations, python);
  return found;
}

TEST(WorkerMemory, TheLargestWorkerAndTheMostTheWorkersHeldTogetherAreCounted) {
  const Found found = find({{use(60, 2, 150), use(80, 20, 150), use(70, 10, 150)},
                            {use(60, 2, 150), use(65, 5, 150), use(90, 30, 150)}});
  const Check& check = found.check("worker_memory");
  EXPECT_EQ(check.count, 2);  // workers sampled
  ASSERT_TRUE(check.measure.has_value());
  EXPECT_DOUBLE_EQ(*check.measure, 90.0);
  EXPECT_EQ(found.findings.memory.peak_live_bytes, 160 * kMiB);  // 70 + 90 at the third tick
  EXPECT_EQ(found.findings.memory.peak_live_workers, 2);
  EXPECT_DOUBLE_EQ(found.findings.memory.peak_live_s, 3.5);
  ASSERT_EQ(found.findings.memory.training.size(), 1u);
  EXPECT_EQ(found.findings.memory.training[0].samples, 3);
  EXPECT_EQ(found.check("copy_on_read").count, 0);
}

TEST(WorkerMemory, ATickThatReadOnlyAYoungWorkerIsNoSumOfTheWorkers) {
  Found found = find({{use(60, 2, 150), use(80, 20, 150)}, {use(60, 2, 150), use(65, 5, 150)}});
  EXPECT_EQ(found.findings.memory.peak_live_bytes, 145 * kMiB);
  MemoryTick first_read;  // a lone first read of a large worker, between whole ticks
  first_read.time_s = 2.0;
  first_read.whole = false;
  first_read.members = {{101, use(500, 2, 150)}};
  found.result.memory.ticks.insert(found.result.memory.ticks.begin() + 1, first_read);
  const std::vector<ProcessRecord>& records = found.result.processes;
  const GenerationReport generations = find_generations(records);
  const PythonView python = analyse_python("on", {}, 0, records, generations, "/usr/share/dlreset/python");
  const Findings findings = analyse_findings(found.result, generations, python);
  EXPECT_DOUBLE_EQ(*findings.check("worker_memory").measure, 500.0);  // the largest worker counts it
  EXPECT_EQ(findings.memory.peak_live_bytes, 145 * kMiB);             // the workers' sum does not
}

TEST(WorkerMemory, ForkWorkersWhosePrivateMemoryGrewAsTheirSharedMemoryFellCopiedWhatTheyRead) {
  // As tests/watch/bug_class/pytorch_13246.py measured: about 127 MiB copied by each worker.
  const Found found = find({{use(70, 2, 140), use(120, 70, 80), use(175, 129, 20)},
                            {use(70, 1, 140), use(110, 60, 90), use(170, 125, 25)}});
  const Check& check = found.check("copy_on_read");
  EXPECT_EQ(check.count, 2);
  ASSERT_EQ(found.findings.memory.copy_on_read.size(), 1u);
  const CopyOnRead& copied = found.findings.memory.copy_on_read[0];
  EXPECT_EQ(copied.workers.size(), 2u);
  EXPECT_EQ(copied.private_growth_bytes, 125 * kMiB + kMiB / 2);  // (127 + 124) / 2
  EXPECT_EQ(copied.shared_fall_bytes, 117 * kMiB + kMiB / 2);     // (120 + 115) / 2
  ASSERT_EQ(check.details.size(), 1u);
  EXPECT_THAT(check.details[0],
              HasSubstr("2 fork workers of pid 100 copied what they read of the data they inherited by fork: "));
  EXPECT_THAT(check.details[0], HasSubstr("each one's private memory grew by 126 MiB on average while its shared "
                                          "memory fell by 118 MiB"));
}

TEST(WorkerMemory, AWorkerThatOnlyAllocatesOrGrewTooLittleCopiedNothing) {
  // 200 MiB of its own, its shared memory untouched: batches, a cache, not a copy.
  EXPECT_EQ(find({{use(70, 2, 140), use(270, 202, 140)}, {}}).check("copy_on_read").count, 0);
  // Its shared memory fell by less than half of what its private memory grew.
  EXPECT_EQ(find({{use(70, 2, 140), use(250, 102, 100)}, {}}).check("copy_on_read").count, 0);
  // A copy, but of less than 64 MiB: a worker's own start makes tens of MiB private.
  EXPECT_EQ(find({{use(70, 2, 140), use(90, 60, 82)}, {}}).check("copy_on_read").count, 0);
  // One sample: no growth to tell.
  EXPECT_EQ(find({{use(175, 129, 20)}, {}}).check("copy_on_read").count, 0);
  // The least that counts: 64 MiB, half of it no longer shared.
  EXPECT_EQ(find({{use(70, 2, 140), use(120, 66, 108)}, {}}).check("copy_on_read").count, 1);
}

TEST(WorkerMemory, ASpawnWorkerInheritedNothingToCopy) {
  const Samples copied = {{use(70, 2, 140), use(175, 129, 20)}, {}};
  EXPECT_EQ(find(copied, 1.0, WorkerStart::fork).check("copy_on_read").count, 1);
  EXPECT_EQ(find(copied, 1.0, WorkerStart::spawn).check("copy_on_read").count, 0);
}

TEST(WorkerMemory, WithoutSamplingNeitherCheckIsSeen) {
  const Found found = find({}, /*interval_s=*/0.0);
  EXPECT_EQ(found.check("worker_memory").seen, false);
  EXPECT_EQ(found.check("worker_memory").unseen_why, "memory was not sampled (--memory-interval 0)");
  EXPECT_EQ(found.check("copy_on_read").seen, false);
  // Sampling on, but no worker lived to a sample: its memory is unknown, not zero.
  const Found unsampled = find({});
  EXPECT_EQ(unsampled.check("worker_memory").seen, false);
  EXPECT_THAT(unsampled.check("worker_memory").unseen_why, HasSubstr("no worker lived long enough to be sampled"));
}

TEST(MemorySampler, SmapsRollupGivesPssPrivateDirtyAndTheSharedPages) {
  const std::string text = "00400000-7ffd1a1a1000 ---p 00000000 00:00 0                              [rollup]\n"
                           "Rss:              401972 kB\nPss:              400587 kB\nPss_Dirty:        287092 kB\n"
                           "Shared_Clean:       1928 kB\nShared_Dirty:         12 kB\nPrivate_Clean:    112952 kB\n"
                           "Private_Dirty:    287092 kB\nSwapPss:               0 kB\n";
  const std::optional<MemoryUse> use = parse_smaps_rollup(text);
  ASSERT_TRUE(use.has_value());
  EXPECT_EQ(use->pss_bytes, 400587u * 1024);  // not Pss_Dirty's, which follows it
  EXPECT_EQ(use->private_dirty_bytes, 287092u * 1024);
  EXPECT_EQ(use->shared_bytes, (1928u + 12u) * 1024);
  EXPECT_FALSE(parse_smaps_rollup("Rss: 12 kB\n").has_value());
}

TEST(MemorySampler, ReadsThisProcessAtEachWholeTickAndSkipsThoseNotDue) {
  const int fd = ::open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  MemorySampler sampler(/*interval_s=*/10.0);
  EXPECT_EQ(sampler.begin_tick(100.0), true);
  sampler.sample_member(::getpid(), fd);
  sampler.end_tick();
  EXPECT_EQ(sampler.begin_tick(101.0), false);  // not due: a first read only
  sampler.end_tick();                           // read nothing: not kept
  EXPECT_EQ(sampler.begin_tick(110.5), true);
  sampler.sample_member(::getpid(), fd);
  sampler.end_tick();
  ::close(fd);
  const MemoryRecord record = sampler.take();
  ASSERT_EQ(record.ticks.size(), 2u);
  EXPECT_EQ(record.reads, 2);
  ASSERT_EQ(record.ticks[0].members.size(), 1u);
  EXPECT_GT(record.ticks[0].members[0].second.pss_bytes, 0u);
  EXPECT_EQ(record.ticks[1].time_s, 110.5);
}

}  // namespace
}  // namespace dlreset::watch
