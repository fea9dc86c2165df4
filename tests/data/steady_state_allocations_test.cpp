// Counts what the main process allocates from the heap per batch once a loader is in its steady
// state, on every back-end and without workers.
#include <ATen/ops/from_blob.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/data/data_loader.h"
#include "tests/support/fixtures.h"

namespace {

/// Every operator new of this program, on any thread: the main thread's and, with the thread
/// back-end, its workers'. Replacing the global operator new is why this suite is a program of
/// its own. Process workers count in their own copies, which nobody reads: the figure is the
/// main process's.
std::atomic<std::int64_t> allocations{0};

void* counted_allocation(std::size_t bytes) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* block = std::malloc(bytes == 0 ? 1 : bytes)) return block;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t bytes) { return counted_allocation(bytes); }
void* operator new[](std::size_t bytes) { return counted_allocation(bytes); }
void operator delete(void* block) noexcept { std::free(block); }
void operator delete[](void* block) noexcept { std::free(block); }
void operator delete(void* block, std::size_t) noexcept { std::free(block); }
void operator delete[](void* block, std::size_t) noexcept { std::free(block); }

namespace dlreset::data {
namespace {

constexpr std::int64_t kBatchSize = 64;
constexpr int kBatchesCounted = 200;

/// What LibTorch itself allocates to wrap one batch's two buffers as tensors the way collate
/// does (for_blob with a context and a plain function to free it, no std::function): its
/// TensorImpl and StorageImpl. Any loader pays this, PyTorch's included; the count comes from
/// this LibTorch, not a guess.
std::int64_t tensor_allocations_per_batch() {
  std::vector<float> features(kBatchSize * 784);
  std::vector<std::int64_t> labels(kBatchSize);
  int context = 0;
  const auto forget = [](void*) {};
  const std::int64_t before = allocations.load();
  {
    at::Tensor inputs = at::for_blob(features.data(), {kBatchSize, 1, 28, 28})
                            .context(&context, forget)
                            .options(at::TensorOptions().dtype(at::kFloat))
                            .make_tensor();
    at::Tensor targets = at::for_blob(labels.data(), {kBatchSize})
                             .context(&context, forget)
                             .options(at::TensorOptions().dtype(at::kLong))
                             .make_tensor();
  }
  return allocations.load() - before;
}

/// Where a loader fetches its batches: in two workers of a start method, or in the main process.
struct Backend {
  std::string name;
  int num_workers = 2;
  StartMethod start_method = StartMethod::thread;
};

/// So that a failure names the back-end rather than the struct's bytes.
void PrintTo(const Backend& backend, std::ostream* out) { *out << backend.name; }

/// Allocations over kBatchesCounted batches of the second epoch of a loader (a persistent one
/// where it has workers), after its first 20: each batch is kept until the next one arrives,
/// as a training step keeps it, so freed batches come back to the pools and slots as they do
/// in a fit.
std::int64_t allocations_over_batches(const Backend& backend) {
  DataLoaderOptions options;
  options.batch_size = kBatchSize;
  options.num_workers = backend.num_workers;
  options.persistent_workers = backend.num_workers > 0;
  options.shuffle = true;
  options.start_method = backend.start_method;
  SyntheticDatasetOptions images;
  images.sample_shape = {1, 28, 28};
  auto loader = testing::synthetic_loader(kBatchSize * (kBatchesCounted + 40), options, images);
  testing::run_epoch(*loader);
  auto it = loader->iter();
  std::optional<Batch> batch;
  for (int i = 0; i < 20; ++i) batch = it->next();
  const std::int64_t before = allocations.load();
  for (int i = 0; i < kBatchesCounted; ++i) {
    batch.reset();
    batch = it->next();
    EXPECT_TRUE(batch.has_value());
  }
  return allocations.load() - before;
}

class SteadyState : public ::testing::TestWithParam<Backend> {};

/// The loader's own allocations per batch, beyond the tensors': none. The labels and features
/// lie in a process worker's slot or in a pool (a thread worker's, or the main process's
/// without workers), and are lent on to the tensors, which need no owner of their own; the
/// index list a batch keeps comes from a pool too, and the sample shape lies in the batch
/// itself (SampleShape). Task messages, the wait set, the held results and the frame being
/// sent reuse their buffers. Before this count existed a batch cost 14 (fork, spawn) and 78
/// (thread, with this synthetic dataset) beyond LibTorch's tensors; the index list and the
/// sample shape were the last 2.
constexpr std::int64_t kOwnAllocationsPerBatch = 0;

/// Allocations that happen now and then, not per batch: a buffer that grows once more to its
/// steady size (the messages a channel decoded in one read), or a batch that comes in its
/// message because the consumer held every slot of its worker at that moment. A tenth of one
/// per batch: one more allocation per batch exceeds it twentyfold.
constexpr std::int64_t kOccasional = kBatchesCounted / 10;

TEST_P(SteadyState, AllocatesPerBatchOnlyWhatItsTensorsNeed) {
  const std::int64_t tensors = tensor_allocations_per_batch();
  ASSERT_GT(tensors, 0) << "from_blob allocated nothing: the counting operator new is not in use";
  const std::int64_t counted = allocations_over_batches(GetParam());
  const double per_batch = static_cast<double>(counted) / kBatchesCounted;
  RecordProperty("allocations_per_batch", std::to_string(per_batch));
  RecordProperty("libtorch_allocations_per_batch", std::to_string(tensors));
  EXPECT_LE(counted, kBatchesCounted * (tensors + kOwnAllocationsPerBatch) + kOccasional)
      << per_batch << " allocations a batch, of which LibTorch's tensors take " << tensors;
}

INSTANTIATE_TEST_SUITE_P(Backends, SteadyState,
                         ::testing::Values(Backend{"thread", 2, StartMethod::thread},
                                           Backend{"fork", 2, StartMethod::fork},
                                           Backend{"spawn", 2, StartMethod::spawn},
                                           Backend{"main_process", 0, StartMethod::thread}),
                         [](const ::testing::TestParamInfo<Backend>& info) { return info.param.name; });

}  // namespace
}  // namespace dlreset::data
