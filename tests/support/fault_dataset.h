// A dataset that misbehaves on purpose, for the fault tests: the synthetic samples, plus a
// sample that throws, one that kills its worker, one that hangs until the worker is told to
// stop, one that stalls reading nothing, and samples that cost more than others. Registered as kind "fault", so that
// spawned workers rebuild it too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/data/core/datasets/synthetic_dataset.h"
#include "harness/data/data_loader.h"

namespace dlreset::testing {

struct FaultDatasetOptions {
  data::SyntheticDatasetOptions samples;
  /// Each fault is off at -1. `get(throw_at)` throws std::runtime_error. `get(crash_at)` kills
  /// its own process with SIGKILL (process workers only). `get(hang_at)` blocks until its
  /// worker is told to stop (workers only), so a hung thread worker can still be shut down.
  std::int64_t throw_at = -1;
  std::int64_t crash_at = -1;
  std::int64_t hang_at = -1;
  /// `get(stall_at)` sleeps `stall_s` seconds and reads nothing meanwhile, as a dataset blocked
  /// on slow storage does: its worker's socket fills up (process workers only; shutdown kills
  /// the worker).
  std::int64_t stall_at = -1;
  int stall_s = 30;
  /// Run with std::system just before crash_at's SIGKILL: "sleep 10 &" leaves a grandchild that
  /// holds whatever descriptors the worker let it inherit.
  std::string before_crash;
  /// Seconds that a process forked (without exec) just before crash_at's SIGKILL sleeps, off at
  /// 0. It holds every descriptor the worker had, its channel too: close-on-exec needs an exec.
  int fork_before_crash_s = 0;
  /// Where crash_at writes, just before its SIGKILL, `trace::monotonic_now_s()` (CLOCK_MONOTONIC,
  /// which every process of the machine shares), so that a test can time the death's report from
  /// the death itself rather than from a start-up it does not control. Empty: nothing written.
  std::string crash_stamp_path;
  /// Extra work for sample i, in pseudo-random draws: sample_work[i % sample_work.size()]
  /// (none when empty). Real work rather than a sleep, so that workers whose batches cost
  /// different amounts finish out of order.
  std::vector<std::int64_t> sample_work;
};

/// The synthetic samples, with the faults of FaultDatasetOptions injected after each sample's
/// load, as a real dataset's would come.
class FaultDataset : public data::SyntheticDataset {
 public:
  explicit FaultDataset(FaultDatasetOptions options);

  std::int64_t get(std::int64_t index, float* features) override;
  std::unique_ptr<data::Dataset> clone() const override;
  std::string spec() const override;

  static std::unique_ptr<FaultDataset> from_spec(const std::string& spec);

 private:
  FaultDatasetOptions faults_;
  /// The extra work's result, kept so that it cannot be optimized away.
  double work_checksum_ = 0.0;
};

/// A loader over a FaultDataset of `size` samples.
std::shared_ptr<data::DataLoader> fault_loader(std::int64_t size, data::DataLoaderOptions options,
                                               FaultDatasetOptions dataset);

}  // namespace dlreset::testing
