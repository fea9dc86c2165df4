#include "harness/data/collate.h"

#include <ATen/Context.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <c10/util/SmallVector.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace dlreset::data {

namespace {

/// Frees the vector that a tensor adopted, when the tensor's storage dies.
template <typename Vector>
void delete_owner(void* owner) {
  delete static_cast<Vector*>(owner);
}

/// Hands a vector's buffer to a tensor without copying it. A batch's features are 200 KB at
/// batch size 64; not copying them again is a fifth of what the main process spends per batch
/// with fork workers. Where the buffer's block source lends the block (a worker's slot, a
/// pool), the tensor's context is the loan and nothing is allocated; otherwise the context owns the
/// vector. A context and a plain function to free it, rather than from_blob's std::function
/// deleter, spare LibTorch an allocation a tensor.
template <typename Vector>
at::Tensor adopt(Vector&& values, at::IntArrayRef sizes, at::ScalarType type) {
  using Owner = std::decay_t<Vector>;
  const at::TensorOptions options = at::TensorOptions().dtype(type);
  if constexpr (!std::is_same_v<typename Owner::allocator_type, std::allocator<typename Owner::value_type>>) {
    BlockSource* source = values.get_allocator().pool().get();
    const std::size_t bytes = values.capacity() * sizeof(typename Owner::value_type);
    if (BlockLoan* loan = source != nullptr && bytes > 0 ? source->lend(values.data(), bytes) : nullptr) {
      // Moved out, so that the caller's buffer is empty, and dies here without freeing the
      // block: the tensor has it now.
      const Owner lent(std::move(values));
      return at::for_blob(loan->block, sizes).context(loan, &BlockSource::end_loan).options(options).make_tensor();
    }
  }
  auto* owner = new Owner(std::move(values));
  return at::for_blob(owner->data(), sizes).context(owner, &delete_owner<Owner>).options(options).make_tensor();
}

/// Copies into page-locked memory, which a non-blocking copy to the GPU needs.
template <typename Vector>
at::Tensor pinned_copy(const Vector& values, at::IntArrayRef sizes, at::ScalarType type) {
  at::Tensor tensor = at::empty(sizes, at::TensorOptions().dtype(type).pinned_memory(true));
  if (!values.empty()) {
    std::memcpy(tensor.data_ptr(), values.data(), values.size() * sizeof(typename Vector::value_type));
  }
  return tensor;
}

}  // namespace

bool can_pin_memory() { return at::hasCUDA(); }

PinMemoryFunction pin_memory_function(bool pin_memory, const PinMemoryFunction& custom) {
  if (!pin_memory) return {};
  if (custom) return custom;
  if (!can_pin_memory()) return {};
  return [](RawBatch&& raw) { return collate(std::move(raw), /*pin_memory=*/true); };
}

Batch collate(RawBatch&& raw, bool pin_memory) {
  // On the stack for up to four sample dimensions (an image's are three): a batch allocates
  // nothing here beyond what its tensors need.
  c10::SmallVector<std::int64_t, 5> input_shape = {raw.size()};
  input_shape.append(raw.sample_shape.begin(), raw.sample_shape.end());
  const std::array<std::int64_t, 1> target_shape = {raw.size()};
  Batch batch;
  if (pin_memory && can_pin_memory()) {
    batch.inputs = pinned_copy(raw.features, input_shape, at::kFloat);
    batch.targets = pinned_copy(raw.labels, target_shape, at::kLong);
  } else {
    batch.inputs = adopt(std::move(raw.features), input_shape, at::kFloat);
    batch.targets = adopt(std::move(raw.labels), target_shape, at::kLong);
  }
  batch.indices = std::move(raw.indices);
  return batch;
}

}  // namespace dlreset::data
