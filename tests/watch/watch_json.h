// What the watch tests read from `dlreset watch --json`.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace dlreset::watch {

/// The status of a watch whose program succeeded and whose gate failed (watch/cli/watch_options.h).
inline constexpr int kGateFailed = 99;
/// The status of a watch that ended a hung program (watch/cli/watch_options.h's kExitHung).
inline constexpr int kExitHung = 124;

inline std::string source_dir() { return DLRESET_SOURCE_DIR; }

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The report, or an empty object where the file is missing or empty.
inline nlohmann::json read_json(const std::string& path) {
  const std::string text = read_file(path);
  if (text.empty()) return nlohmann::json::object();
  return nlohmann::json::parse(text);
}

/// The counts of the report's checks, by name: respawns, live_workers, leaked_workers,
/// extra_iterators, late_set_epoch, worker_deaths, fd_growth, copy_on_read.
using Counts = std::map<std::string, long>;

/// Every check's count: `live_workers` at the peak, and 0 for the others but those `others`
/// names.
inline Counts counts(long live_workers, const Counts& others = {}) {
  Counts all{
      {"respawns", 0},       {"live_workers", live_workers}, {"leaked_workers", 0}, {"extra_iterators", 0},
      {"late_set_epoch", 0}, {"worker_deaths", 0},           {"fd_growth", 0},      {"copy_on_read", 0},
  };
  for (const auto& [check, count] : others) all[check] = count;
  return all;
}

/// How many of the report's processes have `role` ("worker", "other", ...).
inline int count_role(const nlohmann::json& report, const std::string& role) {
  int count = 0;
  for (const auto& process : report["processes"]) count += process["role"] == role;
  return count;
}

/// Each counted check's count in the report, by name. The measured checks (input_wait,
/// first_batch_s, whose gates hold a `measure`) count the passes they measured, which follow the
/// program's loop rather than a finding, so they are left out.
inline std::map<std::string, long> check_counts(const nlohmann::json& report) {
  std::map<std::string, long> counts;
  for (const auto& check : report["checks"]) {
    if (check.contains("measure")) continue;
    counts[check["name"].get<std::string>()] = check["count"].get<long>();
  }
  return counts;
}

}  // namespace dlreset::watch
