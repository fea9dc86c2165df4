// Small pieces of the watch report's wording, shared by its parts.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace dlreset::watch {

inline std::string seconds(double value) { return fmt::format("{:.2f} s", value); }

/// "1 worker", "3 workers".
inline std::string plural(long count, const char* one, const char* many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

/// "62 MiB", "6.1 MiB", "1.9 GiB".
inline std::string size_words(std::uint64_t bytes) {
  const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
  if (mib >= 1024.0) return fmt::format("{:.3g} GiB", mib / 1024.0);
  return fmt::format("{:.3g} MiB", mib);
}

/// What an ended pass threw away, of `in_flight` batches asked of its workers, `ready` of which
/// were known to be made: "4 prefetched batches were thrown away" where all were; "up to 4
/// prefetched batches were thrown away: asked of the workers, none known to be ready" where none
/// was; and "1 prefetched batch was thrown away, and up to 3 more asked of the workers" between.
inline std::string thrown_away_words(long ready, long in_flight) {
  const auto were = [](long count) { return count == 1 ? "batch was" : "batches were"; };
  if (ready >= in_flight) return fmt::format("{} prefetched {} thrown away", ready, were(ready));
  if (ready == 0) {
    return fmt::format("up to {} prefetched {} thrown away: asked of the workers, none known to be ready", in_flight,
                       were(in_flight));
  }
  return fmt::format("{} prefetched {} thrown away, and up to {} more asked of the workers", ready, were(ready),
                     in_flight - ready);
}

}  // namespace dlreset::watch
