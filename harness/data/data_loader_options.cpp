// Mirrors the arguments of torch.utils.data.DataLoader (torch/utils/data/dataloader.py @ v1.10.0).
#include "harness/data/data_loader_options.h"

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

}  // namespace dlreset::data
