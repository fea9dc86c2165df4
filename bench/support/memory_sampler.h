// Samples the memory of this process and all its descendants while a benchmark runs.
#pragma once

#include <atomic>
#include <thread>

namespace dlreset::bench {

/// Sums the proportional set size (PSS, /proc/<pid>/smaps_rollup) of this process and every
/// live descendant every `period_ms`, and keeps the peak. PSS, not RSS: forked workers share
/// their parent's pages copy-on-write, and RSS would count those pages once per process.
class MemorySampler {
 public:
  explicit MemorySampler(int period_ms = 20);
  ~MemorySampler();
  MemorySampler(const MemorySampler&) = delete;
  MemorySampler& operator=(const MemorySampler&) = delete;

  /// The largest total seen so far, in MiB.
  double peak_mib() const { return peak_kib_.load() / 1024.0; }
  /// One sample now, in MiB.
  static double current_mib();

 private:
  std::atomic<bool> stop_{false};
  std::atomic<long> peak_kib_{0};
  std::thread thread_;
};

}  // namespace dlreset::bench
