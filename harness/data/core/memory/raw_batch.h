// A collated batch in plain host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/data/core/datasets/sample_shape.h"
#include "harness/data/core/memory/block_source.h"

namespace dlreset::data {

/// An allocator whose resize leaves new elements uninitialized: a batch's features are written
/// right after the resize (by the fetch, or by the socket read), so zero-filling 200 KB first
/// would be one more pass over them for nothing, and a batch a worker process wrote into shared
/// memory is already there. Given a block source, it takes its block from there and gives it
/// back when the buffer dies (block_source.h): a pool of heap blocks, or a shared-memory slot.
/// The source lives as long as the last buffer that came from it.
template <typename T>
class DefaultInitAllocator {
 public:
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  /// A buffer copied into keeps its own source: ThreadWorkerPool::send copies a task into a
  /// message whose index list already draws on the worker's pool.
  using propagate_on_container_copy_assignment = std::false_type;
  using propagate_on_container_swap = std::true_type;

  DefaultInitAllocator() noexcept = default;
  explicit DefaultInitAllocator(std::shared_ptr<BlockSource> pool) noexcept : pool_(std::move(pool)) {}
  /// Implicit, as the allocator requirements ask: containers rebind and convert allocators.
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>& other) noexcept  // NOLINT(google-explicit-constructor)
      : pool_(other.pool()) {}

  T* allocate(std::size_t n) {
    if (pool_) return static_cast<T*>(pool_->allocate(n * sizeof(T)));
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* block, std::size_t n) noexcept {
    if (pool_) {
      pool_->deallocate(block, n * sizeof(T));
    } else {
      std::allocator<T>().deallocate(block, n);
    }
  }
  template <typename U>
  void construct(U* place) noexcept {
    ::new (static_cast<void*>(place)) U;
  }
  template <typename U, typename... Args>
  void construct(U* place, Args&&... args) {
    ::new (static_cast<void*>(place)) U(std::forward<Args>(args)...);
  }

  const std::shared_ptr<BlockSource>& pool() const noexcept { return pool_; }

  template <typename U>
  bool operator==(const DefaultInitAllocator<U>& other) const noexcept {
    return pool_ == other.pool();
  }
  template <typename U>
  bool operator!=(const DefaultInitAllocator<U>& other) const noexcept {
    return pool_ != other.pool();
  }

 private:
  std::shared_ptr<BlockSource> pool_;
};

/// A batch's features: floats, allocated without being zeroed.
using FeatureBuffer = std::vector<float, DefaultInitAllocator<float>>;
/// A batch's labels, the same way: in a worker process's slot they stay where it wrote them.
using LabelBuffer = std::vector<std::int64_t, DefaultInitAllocator<std::int64_t>>;
/// A batch's dataset indices, the same way: the main process takes them from a pool, so that
/// the index list a Batch keeps costs no allocation a batch. Compares with another
/// IndexBuffer; to compare with a std::vector, compare the ranges (std::equal).
using IndexBuffer = std::vector<std::int64_t, DefaultInitAllocator<std::int64_t>>;

/// What a worker sends back: no LibTorch inside, so forked workers never run a LibTorch op
/// (docs/design.md §4); the parent turns it into tensors (collate.h).
struct RawBatch {
  IndexBuffer indices;       ///< Dataset indices, in batch order.
  LabelBuffer labels;        ///< One label per sample.
  FeatureBuffer features;    ///< indices.size() samples, each sample_numel floats.
  SampleShape sample_shape;  ///< Shape of one sample's features, e.g. {1, 28, 28}.

  std::int64_t size() const { return static_cast<std::int64_t>(indices.size()); }
};

}  // namespace dlreset::data
