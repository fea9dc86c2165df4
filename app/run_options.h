// The settings of `dlreset run`, with the defaults its --help shows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/data/core/data_loader_options.h"
#include "harness/distributed/rendezvous.h"
#include "variants/variant.h"

#ifndef DLRESET_DATA_DIR
#define DLRESET_DATA_DIR "/usr/share/datasets/fashion-mnist"
#endif

namespace dlreset::app {

/// One run: the same Fashion-MNIST workload with one variant and one loader configuration.
/// Training uses the 60000-image train split (shuffled), validation the 10000-image t10k
/// split; both loaders share the worker settings, as in the bug report.
struct RunOptions {
  variants::Variant variant = variants::Variant::fixed;
  int workers = 2;
  int epochs = 3;
  std::int64_t batch_size = 64;
  bool persistent_workers = true;
  bool pin_memory = true;  ///< As in the report; has no effect without a GPU.
  data::StartMethod start_method = data::StartMethod::fork;
  std::int64_t limit_train_batches = -1;  ///< -1: every batch
  std::int64_t limit_val_batches = -1;
  int num_sanity_val_steps = 2;
  std::string data_dir = DLRESET_DATA_DIR;
  std::string device = "auto";
  std::string optimizer = "sgd";
  double learning_rate = 0.05;
  int intra_op_threads = 1;
  std::uint64_t seed = 0;
  /// How the loaders seed: stable (every variant sees the same order) or torch (real torch's
  /// draws, under which 1.5.0's order drifts from 1.5.1's from the second epoch on).
  data::SeedMode seed_mode = data::SeedMode::stable;
  bool trace_resets = false;  ///< Print a traceback at every reset (and keep its frames).
  bool profiler = false;      ///< Print Lightning's SimpleProfiler report.
  std::string json_path;      ///< Write the JSON report here; "-" is stdout.
  std::string events_path;    ///< Write the worker lifecycle events here as JSON.
  bool progress = true;       ///< A progress bar on stderr, when it is a terminal.

  // A multi-rank job (distributed_run.h).
  int ranks = 1;  ///< --ranks: ranks started on this machine, as torchrun's --nproc-per-node.
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;       ///< torchrun's default; 0 lets the kernel choose a free port.
  double dist_timeout_s = 60.0;  ///< Bounds the rendezvous and every collective.
  /// Set when this process is one rank of a job: --ranks above 1 (this process is then rank 0
  /// and starts the others), or RANK and WORLD_SIZE in the environment.
  std::optional<distributed::Rendezvous> rendezvous;
  bool launch_ranks = false;      ///< Rank 0 of --ranks: starts ranks 1 … N−1.
  std::vector<std::string> argv;  ///< This command line, which the ranks it starts run too.
};

}  // namespace dlreset::app
