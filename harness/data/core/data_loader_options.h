// Mirrors the arguments of torch.utils.data.DataLoader (torch/utils/data/dataloader.py @ v1.13.1).
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

/// Where the shuffle and the workers' seeds come from.
enum class SeedMode {
  /// Epoch e's order depends on the seed and e alone, and every iterator's workers get the same
  /// seeds: the buggy and the fixed loop see the same batches, so their losses and timings can be
  /// compared batch for batch. dlreset's default, for that reason.
  stable,
  /// As torch 1.13 with `generator=torch.Generator().manual_seed(seed)`: each new iterator draws
  /// its workers' base seed from that generator, and each epoch's order is a `randperm` on it.
  /// The orders then equal real torch's in every variant, including the drift from epoch 2 on
  /// that Lightning 1.5.0's new iterator per epoch causes.
  torch,
};

const char* to_string(SeedMode mode);
/// "stable" or "torch"; nullopt for anything else.
std::optional<SeedMode> parse_seed_mode(const std::string& text);

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
  /// Process workers collate into shared-memory slots and send only a descriptor
  /// (docs/design.md, "The transport"). false sends every batch through the worker's socket,
  /// the transport before the slots, kept so that one run can compare the two
  /// (bench/loader_bench.cpp). No effect on thread workers.
  bool shared_memory = true;
  /// Seconds to wait for a batch from the workers; 0 waits forever.
  double timeout_s = 0.0;
  bool drop_last = false;
  /// Seeds the shuffle (a new permutation every epoch from one generator) and the workers'
  /// base seed, as `seed_mode` says.
  std::uint64_t seed = 0;
  SeedMode seed_mode = SeedMode::stable;
  StartMethod start_method = StartMethod::fork;
  /// Runs in each worker before its first batch (thread and fork only: a C++ function object
  /// cannot be sent to a spawned program).
  std::function<void(int worker_id)> worker_init_fn;
};

}  // namespace dlreset::data
