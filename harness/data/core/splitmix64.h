// splitmix64's mixing step: turns nearby integers (seeds 0, 1, 2; sample indices) into
// unrelated, well-distributed 64-bit values. Fast, with no state, so every worker computes the
// same value for the same input.
#pragma once

#include <cstdint>

namespace dlreset::data {

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace dlreset::data
