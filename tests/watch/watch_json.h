// What the watch tests read from `dlreset watch --json`.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace dlreset::watch {

/// The status of a watch whose program succeeded and whose gate failed (app/watch_command.h).
inline constexpr int kGateFailed = 99;

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

/// Each check's count in the report, by name.
inline std::map<std::string, long> check_counts(const nlohmann::json& report) {
  std::map<std::string, long> counts;
  for (const auto& check : report["checks"]) counts[check["name"].get<std::string>()] = check["count"].get<long>();
  return counts;
}

}  // namespace dlreset::watch
