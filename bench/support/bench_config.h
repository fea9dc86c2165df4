// What the benchmark families share, built by bench/main.cpp from its command line.
#pragma once

#include <memory>
#include <string>
#include <utility>

namespace dlreset::bench {

/// BM_Fit and BM_ComputeOnly run this workload. The defaults are the comparison of docs/design.md §6: 5
/// epochs of 50 training and 10 validation batches of 64, sanity check on.
struct BenchConfig {
  std::string data_dir = DLRESET_DATA_DIR;
  int epochs = 5;
  long limit_train_batches = 50;
  long limit_val_batches = 10;
  int batch_size = 64;
  /// Where the model runs: auto, cpu or cuda. The GPU figures ask for cuda, so that a LibTorch
  /// that cannot see the GPU stops the run instead of quietly measuring the CPU.
  std::string device = "auto";
};

/// The Fashion-MNIST files gunzipped into a temporary directory, made on first use and removed
/// with this object: LibTorch's MNIST dataset reads only uncompressed files.
class DecompressedFashionMnist {
 public:
  explicit DecompressedFashionMnist(std::string source_dir) : source_dir_(std::move(source_dir)) {}
  ~DecompressedFashionMnist();
  /// It removes its folder at its end: a copy would remove it under the other.
  DecompressedFashionMnist(const DecompressedFashionMnist&) = delete;
  DecompressedFashionMnist& operator=(const DecompressedFashionMnist&) = delete;
  DecompressedFashionMnist(DecompressedFashionMnist&&) = delete;
  DecompressedFashionMnist& operator=(DecompressedFashionMnist&&) = delete;
  const std::string& dir();

 private:
  std::string source_dir_;
  std::string dir_;
};

}  // namespace dlreset::bench
