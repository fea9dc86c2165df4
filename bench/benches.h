// The benchmark families, registered by bench/main.cpp with the settings of its command line.
#pragma once

#include "bench/support/bench_config.h"

namespace dlreset::bench {

void register_loader_benchmarks(const BenchConfig& config, DecompressedFashionMnist& files);
void register_fit_benchmarks(const BenchConfig& config);
void register_watched_benchmarks();
void register_watch_benchmarks();

/// Runs a training and a validation step once on `config.device` when it is a GPU, before any
/// benchmark is timed (see fit_bench.cpp).
void warm_up_device(const BenchConfig& config);

}  // namespace dlreset::bench
