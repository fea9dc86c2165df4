// Mirrors the arguments of torch.utils.data.DataLoader (torch/utils/data/dataloader.py @ v1.10.0).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace dlreset::data {

/// How workers start. PyTorch uses processes (fork on Linux, spawn on Windows and macOS);
/// LibTorch's own C++ loader uses threads.
enum class StartMethod {
  thread,  ///< A thread per worker, each with its own copy of the dataset.
  fork,    ///< A forked child per worker: cheap to start, inherits the dataset object.
  spawn,   ///< A fresh run of the program per worker, which rebuilds and reloads everything.
};

const char* to_string(StartMethod method);
/// "thread", "fork" or "spawn"; nullopt for anything else.
std::optional<StartMethod> parse_start_method(const std::string& text);

/// The DataLoader's settings, with PyTorch's defaults. `DataLoader` checks them when it is
/// built and says what is wrong in a full sentence.
struct DataLoaderOptions {
  /// Names the loader in events, traces and errors ("train", "val").
  std::string name = "loader";
  std::int64_t batch_size = 1;
  bool shuffle = false;
  int num_workers = 0;
  /// Keep the workers (and their dataset copies) alive across epochs: `iter()` resets the live
  /// iterator instead of building a new one.
  bool persistent_workers = false;
  /// Collate batches into page-locked memory, when a CUDA device is present (as in PyTorch,
  /// it has no effect without one).
  bool pin_memory = false;
  /// Index batches kept in flight per worker.
  int prefetch_factor = 2;
  /// Seconds to wait for a batch from the workers; 0 waits forever.
  double timeout_s = 0.0;
  bool drop_last = false;
  /// Seeds the shuffle (a new permutation every epoch from one generator) and the workers'
  /// base seed. Unlike PyTorch, building a new iterator draws nothing from the shuffle's
  /// generator, so the batch order is the same whether workers persist or not.
  std::uint64_t seed = 0;
  StartMethod start_method = StartMethod::fork;
  /// Runs in each worker before its first batch (thread and fork only: a C++ function object
  /// cannot be sent to a spawned program).
  std::function<void(int worker_id)> worker_init_fn;
};

}  // namespace dlreset::data
