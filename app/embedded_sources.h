// dlreset's own sources, embedded at build time (cmake/EmbedSources.cmake).
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace dlreset::app {

struct EmbeddedFile {
  const char* path;     ///< Repository-relative, as in a trace: "repro/fetching.cpp".
  const char* mirrors;  ///< The upstream file it mirrors, "pytorch_lightning/... @ 1.5.0", or "".
  const char* text;
};

extern const EmbeddedFile kEmbeddedFiles[];
extern const std::size_t kEmbeddedFileCount;
/// `diff -u repro/fetching.cpp fixed/fetching.cpp`: the fix, as this checkout has it.
extern const char* const kFixDiff;

/// The embedded file at `path`, or null.
const EmbeddedFile* find_embedded_file(const std::string& path);
/// The upstream file `path` mirrors ("" if none or unknown).
std::string mirrored_file(const std::string& path);
/// Line `line` (1-based) of `path`, without its newline; "" if unknown.
std::string source_line(const std::string& path, int line);
/// Lines [first, last] of `path`, each prefixed with its number.
std::string source_excerpt(const std::string& path, int first, int last);
/// The 1-based line range of the function whose definition starts with `signature` in `path`
/// (up to its closing brace at column 0); {0, 0} if not found.
std::pair<int, int> function_lines(const std::string& path, const std::string& signature);

}  // namespace dlreset::app
