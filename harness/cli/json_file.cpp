#include "harness/cli/json_file.h"

#include <fstream>
#include <iostream>
#include <stdexcept>

namespace dlreset::cli {

void write_json(const std::string& path, const nlohmann::json& json) {
  if (path == "-") {
    std::cout << json.dump(2) << "\n";
    return;
  }
  std::ofstream out(path);
  if (!out) throw std::runtime_error("Cannot write the JSON report to '" + path + "'.");
  out << json.dump(2) << "\n";
  if (!out.flush()) throw std::runtime_error("Cannot write the JSON report to '" + path + "'.");
}

}  // namespace dlreset::cli
