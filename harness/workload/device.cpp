#include "harness/workload/device.h"

#include <ATen/Context.h>
#include <torch/cuda.h>

#include <stdexcept>

namespace dlreset::workload {

DeviceChoice resolve_device(const std::string& requested) {
  if (requested != "auto" && requested != "cpu" && requested != "cuda") {
    throw std::invalid_argument("Unknown device '" + requested + "'; use auto, cpu or cuda.");
  }
  const bool have_cuda = torch::cuda::is_available();
  if (requested == "cuda" && !have_cuda) {
    throw std::invalid_argument("--device cuda was asked for, but no CUDA device is usable here (Debian's libtorch-dev "
                                "is built without CUDA, or no GPU is visible); use --device cpu or --device auto.");
  }
  DeviceChoice choice;
  choice.cuda = requested == "cuda" || (requested == "auto" && have_cuda);
  choice.description = choice.cuda ? "cuda:0" : "cpu";
  return choice;
}

}  // namespace dlreset::workload
