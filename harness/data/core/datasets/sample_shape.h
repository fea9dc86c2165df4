// The shape of one sample's features, kept without a heap allocation for the usual few dims.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace dlreset::data {

/// A sample's sizes, e.g. {1, 28, 28}. A batch carries its sample's shape from the worker to
/// collate, and a std::vector would cost the loader a heap allocation a batch (one more in a
/// thread worker, whose dataset returns the shape by value). Up to kInlineDims sizes lie in
/// the object itself; a longer shape, which no dataset here has, goes to the heap, so there is
/// no limit on the number of dims. Copies and compares as a sequence.
class SampleShape {
 public:
  using value_type = std::int64_t;
  using size_type = std::size_t;
  using iterator = const std::int64_t*;
  using const_iterator = const std::int64_t*;

  /// Enough for an image (C, H, W), a clip (C, T, H, W) and then some.
  static constexpr std::size_t kInlineDims = 6;

  SampleShape() = default;
  SampleShape(std::initializer_list<std::int64_t> sizes) : SampleShape(sizes.begin(), sizes.end()) {}
  /// Out of line: inlined where the range is a short fixed array (a ring descriptor's shape),
  /// GCC's -Warray-bounds at -O2 takes the heap branch, which that caller never reaches, for a
  /// read past the array.
  SampleShape(const std::int64_t* first, const std::int64_t* last);
  explicit SampleShape(const std::vector<std::int64_t>& sizes)
      : SampleShape(sizes.data(), sizes.data() + sizes.size()) {}

  const std::int64_t* data() const { return size_ <= kInlineDims ? inline_.data() : heap_.data(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  std::int64_t operator[](std::size_t dim) const { return data()[dim]; }
  /// The sizes as a vector, for JSON and other APIs that take one.
  std::vector<std::int64_t> to_vector() const { return std::vector<std::int64_t>(begin(), end()); }

  friend bool operator==(const SampleShape& a, const SampleShape& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const SampleShape& a, const SampleShape& b) { return !(a == b); }

 private:
  std::array<std::int64_t, kInlineDims> inline_{};
  std::vector<std::int64_t> heap_;  ///< Empty, and so never allocated, while the shape fits inline_.
  std::size_t size_ = 0;
};

}  // namespace dlreset::data
