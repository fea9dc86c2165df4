#include "harness/data/feature_buffer_pool.h"

#include <new>

namespace dlreset::data {

FeatureBufferPool::FeatureBufferPool(FeatureBufferPoolLimits limits) : limits_(limits) { kept_.reserve(limits_.blocks); }

FeatureBufferPool::~FeatureBufferPool() {
  for (const auto& [bytes, block] : kept_) ::operator delete(block, bytes);
}

void* FeatureBufferPool::allocate(std::size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->first == bytes) {
        void* block = it->second;
        kept_bytes_ -= it->first;
        kept_.erase(it);
        ++reuses_;
        return block;
      }
    }
    ++fresh_allocations_;
  }
  return ::operator new(bytes);
}

void FeatureBufferPool::deallocate(void* block, std::size_t bytes) noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (kept_.size() < limits_.blocks && bytes <= limits_.bytes - kept_bytes_) {
      kept_.emplace_back(bytes, block);
      kept_bytes_ += bytes;
      return;
    }
  }
  ::operator delete(block, bytes);
}

std::int64_t FeatureBufferPool::fresh_allocations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fresh_allocations_;
}

std::int64_t FeatureBufferPool::reuses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reuses_;
}

std::size_t FeatureBufferPool::kept() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kept_.size();
}

std::size_t FeatureBufferPool::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kept_bytes_;
}

}  // namespace dlreset::data
