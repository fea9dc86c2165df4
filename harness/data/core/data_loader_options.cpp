// Mirrors the arguments of torch.utils.data.DataLoader (torch/utils/data/dataloader.py @ v1.13.1).
#include "harness/data/core/data_loader_options.h"

#include <cstddef>
#include <optional>
#include <string>

namespace dlreset::data {

namespace {

/// The value of `all` whose to_string is `text`: each name is written once, in to_string, so
/// the parser cannot drift from what the reports print.
template <typename Enum, std::size_t N>
std::optional<Enum> parse_by_name(const std::string& text, const Enum (&all)[N]) {
  for (const Enum value : all) {
    if (text == to_string(value)) return value;
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(StartMethod method) {
  switch (method) {
    case StartMethod::thread: return "thread";
    case StartMethod::fork: return "fork";
    case StartMethod::spawn: return "spawn";
  }
  return "unknown";
}

std::optional<StartMethod> parse_start_method(const std::string& text) {
  return parse_by_name(text, {StartMethod::thread, StartMethod::fork, StartMethod::spawn});
}

const char* to_string(SeedMode mode) {
  switch (mode) {
    case SeedMode::stable: return "stable";
    case SeedMode::torch: return "torch";
  }
  return "unknown";
}

std::optional<SeedMode> parse_seed_mode(const std::string& text) {
  return parse_by_name(text, {SeedMode::stable, SeedMode::torch});
}

}  // namespace dlreset::data
