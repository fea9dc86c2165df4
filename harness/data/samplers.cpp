// Mirrors torch/utils/data/sampler.py @ v1.13.1: SequentialSampler, RandomSampler and BatchSampler.
#include <ATen/core/Tensor.h>
#include <ATen/ops/randperm.h>

#include <numeric>

#include "harness/data/batch_sampler.h"
#include "harness/data/random_sampler.h"
#include "harness/data/sequential_sampler.h"

namespace dlreset::data {

std::vector<std::int64_t> SequentialSampler::epoch_order() {
  std::vector<std::int64_t> order(static_cast<std::size_t>(size_));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  return order;
}

std::vector<std::int64_t> RandomSampler::epoch_order() {
  if (torch_generator_) {
    const at::Tensor permutation = at::randperm(size_, *torch_generator_, at::kLong);
    const std::int64_t* values = permutation.data_ptr<std::int64_t>();
    return std::vector<std::int64_t>(values, values + size_);
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(size_));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  for (std::size_t i = order.size(); i > 1; --i) {
    // Lemire's multiply-shift: an unbiased-enough draw in [0, i) that is the same everywhere.
    const unsigned __int128 product = static_cast<unsigned __int128>(generator_()) * i;
    const auto j = static_cast<std::size_t>(product >> 64);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

void RandomSampler::on_exhausted() {
  if (torch_generator_) at::randperm(size_, *torch_generator_, at::kLong);
}

BatchSampler::BatchSampler(std::unique_ptr<Sampler> sampler, std::int64_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {}

BatchSampler::Iterator BatchSampler::iter() { return Iterator(sampler_.get(), batch_size_, drop_last_); }

std::int64_t BatchSampler::size() const {
  const std::int64_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::optional<std::vector<std::int64_t>> BatchSampler::Iterator::next() {
  if (sampler_ == nullptr) return std::nullopt;
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
  if (left == 0 || (drop_last_ && left < want)) return std::nullopt;
  const std::size_t take = std::min(left, want);
  std::vector<std::int64_t> batch(order_.begin() + static_cast<std::ptrdiff_t>(position_),
                                  order_.begin() + static_cast<std::ptrdiff_t>(position_ + take));
  position_ += take;
  return batch;
}

}  // namespace dlreset::data
