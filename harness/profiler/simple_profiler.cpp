// Mirrors pytorch_lightning/profiler/simple.py @ 1.5.0.
#include "harness/profiler/simple_profiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace dlreset::profiler {

namespace {

/// Python's f"{value:.5}": 5 significant digits, as %g, but a fixed-point number keeps a digit
/// after the point ("100.0", not "100").
std::string python_short(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.5g", value);
  std::string out = text;
  if (out.find_first_of(".en") == std::string::npos) out += ".0";
  return out;
}

/// One row: f"{sep}{action:<{max_key}s}\t|  {mean:<15}\t|{num_calls:<15}\t|  {total:<15}\t|  {per:<15}\t|"
std::string log_row(std::size_t max_key, const std::string& action, const std::string& mean,
                    const std::string& num_calls, const std::string& total, const std::string& per) {
  return fmt::format("\n{:<{}}\t|  {:<15}\t|{:<15}\t|  {:<15}\t|  {:<15}\t|", action, max_key, mean, num_calls, total,
                     per);
}

}  // namespace

void SimpleProfiler::start(const std::string& action) {
  const auto now = Clock::now();
  if (!current_.emplace(action, now).second) {
    throw std::logic_error("SimpleProfiler: action '" + action +
                           "' was started while it was already running; stop it first.");
  }
}

void SimpleProfiler::stop(const std::string& action) {
  const auto now = Clock::now();
  const auto running = current_.find(action);
  if (running == current_.end()) {
    throw std::logic_error("SimpleProfiler: action '" + action + "' was stopped without being started.");
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
  std::sort(out.begin(), out.end(), [](const ActionStats& a, const ActionStats& b) { return a.total_s > b.total_s; });
  return out;
}

std::string SimpleProfiler::summary() const {
  std::string out;
  if (!stage_.empty()) {
    std::string title = stage_;
    for (char& c : title) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out += title + " ";
  }
  out += "Profiler Report\n";
  if (recorded_.empty()) return out + "\n";
  const double wall = std::chrono::duration<double>(Clock::now() - created_).count();
  std::size_t max_key = 0;
  for (const auto& entry : recorded_) max_key = std::max(max_key, entry.first.size());
  out += log_row(max_key, "Action", "Mean duration (s)", "Num calls", "Total time (s)", "Percentage %");
  // Lightning's rule is as long as everything written so far, the title included.
  const std::string rule = "\n" + std::string(out.size(), '-');
  out += rule;
  out += log_row(max_key, "Total", "-", "_", python_short(wall), "100 %");
  out += rule;
  // stats() is sorted by total time, which orders the shares of one wall time alike.
  for (const ActionStats& stats : this->stats()) {
    out += log_row(max_key, stats.action, python_short(stats.mean_s()), std::to_string(stats.calls),
                   python_short(stats.total_s), python_short(wall > 0 ? 100.0 * stats.total_s / wall : 0.0));
  }
  return out + "\n";
}

}  // namespace dlreset::profiler
