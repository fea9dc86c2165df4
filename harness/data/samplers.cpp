// Mirrors torch/utils/data/sampler.py @ v1.10.0: SequentialSampler, RandomSampler and BatchSampler.
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

BatchSampler::BatchSampler(std::unique_ptr<Sampler> sampler, std::int64_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {}

BatchSampler::Iterator BatchSampler::iter() {
  return Iterator(sampler_->epoch_order(), batch_size_, drop_last_);
}

std::int64_t BatchSampler::size() const {
  const std::int64_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::optional<std::vector<std::int64_t>> BatchSampler::Iterator::next() {
  const std::size_t left = order_.size() - position_;
  const auto want = static_cast<std::size_t>(batch_size_);
  if (left == 0 || (drop_last_ && left < want)) return std::nullopt;
  const std::size_t take = std::min(left, want);
  std::vector<std::int64_t> batch(order_.begin() + static_cast<std::ptrdiff_t>(position_),
                                  order_.begin() + static_cast<std::ptrdiff_t>(position_ + take));
  position_ += take;
  return batch;
}

}  // namespace dlreset::data
