// Small pieces of the watch report's wording, shared by its parts.
#pragma once

#include <fmt/format.h>

#include <string>

namespace dlreset::watch {

inline std::string seconds(double value) { return fmt::format("{:.2f} s", value); }

/// "1 worker", "3 workers".
inline std::string plural(long count, const char* one, const char* many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

}  // namespace dlreset::watch
