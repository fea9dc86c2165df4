// Mirrors BatchSampler of torch/utils/data/sampler.py @ v1.13.1.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "harness/data/core/samplers/batch_sampler.h"

namespace dlreset::data {

BatchSampler::BatchSampler(std::unique_ptr<Sampler> sampler, std::int64_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {}

BatchSampler::Iterator BatchSampler::iter() { return Iterator(sampler_.get(), batch_size_, drop_last_); }

std::int64_t BatchSampler::size() const {
  const std::int64_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::optional<std::vector<std::int64_t>> BatchSampler::Iterator::next() {
  std::vector<std::int64_t> batch;
  if (!next(batch)) return std::nullopt;
  return batch;
}

bool BatchSampler::Iterator::next_range(std::size_t& first, std::size_t& take) {
  if (sampler_ == nullptr) return false;
  if (!drawn_) {
    order_ = sampler_->epoch_order();
    drawn_ = true;
  }
  const std::size_t left = order_.size() - position_;
  const auto want = static_cast<std::size_t>(batch_size_);
  // Torch's BatchSampler asks its sampler for one index more than it has exactly when a batch
  // cannot be filled (a short last batch, or the call after the last full one).
  if (left < want && !exhausted_) {
    exhausted_ = true;
    sampler_->on_exhausted();
  }
  if (left == 0 || (drop_last_ && left < want)) return false;
  first = position_;
  take = std::min(left, want);
  position_ += take;
  return true;
}

}  // namespace dlreset::data
