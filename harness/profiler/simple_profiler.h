// Mirrors pytorch_lightning/profiler/simple.py @ 1.5.0.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/profiler/profiler.h"

namespace dlreset::profiler {

/// Wall time per action: calls, total and mean. Like Lightning's, it tells you *that* an epoch
/// is slow (run_training_epoch dwarfs run_training_batch), not *why*: the bug's reporter had to
/// find the why with a stack trace.
class SimpleProfiler : public Profiler {
 public:
  struct ActionStats {
    std::string action;
    std::int64_t calls = 0;
    double total_s = 0.0;
    double mean_s() const { return calls > 0 ? total_s / static_cast<double>(calls) : 0.0; }
  };

  /// The report's total is the time since the profiler was made, as Lightning's.
  SimpleProfiler() : created_(Clock::now()) {}
  /// Titles the report: "fit" gives "FIT Profiler Report".
  void setup(const std::string& stage) override { stage_ = stage; }
  void start(const std::string& action) override;
  void stop(const std::string& action) override;
  /// Lightning's report, laid out as its SimpleProfiler(extended=True) writes it: "FIT Profiler
  /// Report", then Action | Mean duration (s) | Num calls | Total time (s) | Percentage %, a
  /// Total row, and the actions by their share of the time since the profiler was made.
  std::string summary() const override;

  /// Per action, sorted by total time (longest first).
  std::vector<ActionStats> stats() const;

 private:
  using Clock = std::chrono::steady_clock;
  std::map<std::string, Clock::time_point> current_;
  std::map<std::string, ActionStats> recorded_;
  Clock::time_point created_;
  std::string stage_;
};

}  // namespace dlreset::profiler
