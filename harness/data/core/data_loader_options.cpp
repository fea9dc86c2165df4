// Mirrors the arguments of torch.utils.data.DataLoader (torch/utils/data/dataloader.py @ v1.13.1).
#include "harness/data/core/data_loader_options.h"

namespace dlreset::data {

const char* to_string(StartMethod method) {
  switch (method) {
    case StartMethod::thread: return "thread";
    case StartMethod::fork: return "fork";
    case StartMethod::spawn: return "spawn";
  }
  return "unknown";
}

std::optional<StartMethod> parse_start_method(const std::string& text) {
  if (text == "thread") return StartMethod::thread;
  if (text == "fork") return StartMethod::fork;
  if (text == "spawn") return StartMethod::spawn;
  return std::nullopt;
}

const char* to_string(SeedMode mode) {
  switch (mode) {
    case SeedMode::stable: return "stable";
    case SeedMode::torch: return "torch";
  }
  return "unknown";
}

std::optional<SeedMode> parse_seed_mode(const std::string& text) {
  if (text == "stable") return SeedMode::stable;
  if (text == "torch") return SeedMode::torch;
  return std::nullopt;
}

}  // namespace dlreset::data
