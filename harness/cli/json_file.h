// Writing a JSON report to a file, or to stdout as "-".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dlreset::cli {

/// Writes `json` (indented) to `path`, or to stdout when `path` is "-"; throws
/// std::runtime_error naming the path when the file cannot be written.
void write_json(const std::string& path, const nlohmann::json& json);

}  // namespace dlreset::cli
