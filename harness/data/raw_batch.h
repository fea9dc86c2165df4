// A collated batch in plain host memory.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace dlreset::data {

/// An allocator whose resize leaves new elements uninitialized: a batch's features are written
/// right after the resize (by the fetch, or by the socket read), so zero-filling 200 KB first
/// would be one more pass over them for nothing.
template <typename T>
class DefaultInitAllocator : public std::allocator<T> {
 public:
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  template <typename U>
  void construct(U* place) noexcept {
    ::new (static_cast<void*>(place)) U;
  }
  template <typename U, typename... Args>
  void construct(U* place, Args&&... args) {
    ::new (static_cast<void*>(place)) U(std::forward<Args>(args)...);
  }
};

/// A batch's features: floats, allocated without being zeroed.
using FeatureBuffer = std::vector<float, DefaultInitAllocator<float>>;

/// What a worker sends back: no LibTorch inside, so forked workers never run a LibTorch op
/// (DESIGN §5); the parent turns it into tensors (collate.h).
struct RawBatch {
  std::vector<std::int64_t> indices;       ///< Dataset indices, in batch order.
  std::vector<std::int64_t> labels;        ///< One label per sample.
  FeatureBuffer features;                  ///< indices.size() samples, each sample_numel floats.
  std::vector<std::int64_t> sample_shape;  ///< Shape of one sample's features, e.g. {1, 28, 28}.

  std::int64_t size() const { return static_cast<std::int64_t>(indices.size()); }
};

}  // namespace dlreset::data
