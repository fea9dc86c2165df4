// One rank of a test job: joins the job its environment names (torch's env:// variables), averages
// a tensor holding rank + 1 with the other ranks, and prints what it got. The distributed tests
// start several of these at once.
#include <ATen/ops/full.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "harness/distributed/process_group.h"
#include "harness/distributed/rendezvous.h"

int main() {
  using namespace dlreset::distributed;
  try {
    std::optional<Rendezvous> rendezvous = env_rendezvous([](const char* name) { return std::getenv(name); });
    if (!rendezvous) {
      std::fprintf(stderr, "rank_probe: set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT.\n");
      return 2;
    }
    if (const char* timeout_ms = std::getenv("DLRESET_PROBE_TIMEOUT_MS")) {
      rendezvous->timeout = std::chrono::milliseconds(std::atol(timeout_ms));
    }
    ProcessGroup group(*rendezvous);
    std::vector<at::Tensor> tensors{at::full({3}, static_cast<double>(group.rank() + 1))};
    group.all_reduce_mean(tensors);
    group.barrier();
    std::printf("rank %d of %d: mean %.3f\n", group.rank(), group.world_size(), tensors[0][0].item<double>());
    return 0;
  } catch (const DistError& e) {
    std::fprintf(stderr, "rank_probe: %s\n", e.what());
    return 1;
  }
}
