#include "bench/support/bench_config.h"

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>

#include "harness/data/core/datasets/idx_reader.h"

namespace dlreset::bench {

const std::string& DecompressedFashionMnist::dir() {
  if (!dir_.empty()) return dir_;
  std::string pattern = std::filesystem::temp_directory_path().string() + "/dlreset-bench-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  for (const char* name :
       {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    data::IdxHeader header;
    const auto payload = data::read_idx_payload(source_dir_ + "/" + name + ".gz", &header);
    data::write_idx_file(dir_ + "/" + name, header.dims, payload);
  }
  return dir_;
}

DecompressedFashionMnist::~DecompressedFashionMnist() {
  if (dir_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace dlreset::bench
