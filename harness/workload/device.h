// Where the workload runs: CUDA when there is a GPU, the CPU otherwise.
#pragma once

#include <string>

namespace dlreset::workload {

/// "auto" picks CUDA when this LibTorch was built with it and a GPU is visible, else the CPU.
/// "cuda" without a GPU is an error that says so; anything else is an error that lists the
/// accepted values.
struct DeviceChoice {
  bool cuda = false;
  std::string description;  ///< "cpu" or "cuda:0"; ci/gpu.sh records the GPU's name apart
};

DeviceChoice resolve_device(const std::string& requested);

}  // namespace dlreset::workload
