// Mirrors pytorch_lightning/profiler/simple.py @ 1.5.0.
#include "harness/profiler/simple_profiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace dlreset::profiler {

void SimpleProfiler::start(const std::string& action) {
  const auto now = Clock::now();
  if (!started_) {
    first_start_ = now;
    started_ = true;
  }
  if (!current_.emplace(action, now).second) {
    throw std::logic_error("SimpleProfiler: action '" + action +
                           "' was started while it was already running; stop it first.");
  }
}

void SimpleProfiler::stop(const std::string& action) {
  const auto now = Clock::now();
  const auto running = current_.find(action);
  if (running == current_.end()) {
    throw std::logic_error("SimpleProfiler: action '" + action +
                           "' was stopped without being started.");
  }
  ActionStats& stats = recorded_[action];
  stats.action = action;
  ++stats.calls;
  stats.total_s += std::chrono::duration<double>(now - running->second).count();
  current_.erase(running);
}

std::vector<SimpleProfiler::ActionStats> SimpleProfiler::stats() const {
  std::vector<ActionStats> out;
  for (const auto& entry : recorded_) out.push_back(entry.second);
  std::sort(out.begin(), out.end(),
            [](const ActionStats& a, const ActionStats& b) { return a.total_s > b.total_s; });
  return out;
}

std::string SimpleProfiler::summary() const {
  const double wall =
      started_ ? std::chrono::duration<double>(Clock::now() - first_start_).count() : 0.0;
  std::string out = "Profiler Report\n\n";
  out += fmt::format("{:<34} | {:>18} | {:>9} | {:>14} | {:>12}\n", "Action", "Mean duration (s)",
                     "Num calls", "Total time (s)", "Percentage %");
  out += std::string(99, '-') + "\n";
  out += fmt::format("{:<34} | {:>18} | {:>9} | {:>14.5f} | {:>12.1f}\n", "Total", "-", "-", wall,
                     100.0);
  for (const ActionStats& stats : this->stats()) {
    out += fmt::format("{:<34} | {:>18.5f} | {:>9} | {:>14.5f} | {:>12.1f}\n", stats.action,
                       stats.mean_s(), stats.calls, stats.total_s,
                       wall > 0 ? 100.0 * stats.total_s / wall : 0.0);
  }
  return out;
}

}  // namespace dlreset::profiler
