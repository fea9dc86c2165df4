#include "harness/data/core/datasets/sample_shape.h"

namespace dlreset::data {

SampleShape::SampleShape(const std::int64_t* first, const std::int64_t* last)
    : size_(static_cast<std::size_t>(last - first)) {
  if (size_ <= kInlineDims) {
    std::copy(first, last, inline_.begin());
  } else {
    heap_.assign(first, last);
  }
}

}  // namespace dlreset::data
