#include "app/embedded_sources.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <utility>
#include <vector>

namespace dlreset::app {

namespace {
std::vector<std::string> lines_of(const char* text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}
}  // namespace

const EmbeddedFile* find_embedded_file(const std::string& path) {
  for (std::size_t i = 0; i < kEmbeddedFileCount; ++i) {
    if (path == kEmbeddedFiles[i].path) return &kEmbeddedFiles[i];
  }
  return nullptr;
}

std::string mirrored_file(const std::string& path) {
  const EmbeddedFile* file = find_embedded_file(path);
  return file != nullptr ? file->mirrors : "";
}

std::string source_line(const std::string& path, int line) {
  const EmbeddedFile* file = find_embedded_file(path);
  if (file == nullptr || line < 1) return "";
  const std::vector<std::string> lines = lines_of(file->text);
  return line <= static_cast<int>(lines.size()) ? lines[static_cast<std::size_t>(line - 1)] : "";
}

std::string source_excerpt(const std::string& path, int first, int last) {
  const EmbeddedFile* file = find_embedded_file(path);
  if (file == nullptr) return "";
  const std::vector<std::string> lines = lines_of(file->text);
  std::string out;
  for (int n = std::max(first, 1); n <= last && n <= static_cast<int>(lines.size()); ++n) {
    out += fmt::format("{:>4} | {}\n", n, lines[static_cast<std::size_t>(n - 1)]);
  }
  return out;
}

std::pair<int, int> function_lines(const std::string& path, const std::string& signature) {
  const EmbeddedFile* file = find_embedded_file(path);
  if (file == nullptr) return {0, 0};
  const std::vector<std::string> lines = lines_of(file->text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind(signature, 0) != 0) continue;
    if (!lines[i].empty() && lines[i].back() == '}') return {static_cast<int>(i + 1), static_cast<int>(i + 1)};
    for (std::size_t j = i; j < lines.size(); ++j) {
      if (lines[j].rfind("}", 0) == 0) return {static_cast<int>(i + 1), static_cast<int>(j + 1)};
    }
  }
  return {0, 0};
}

}  // namespace dlreset::app
