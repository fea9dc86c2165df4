#include "variants/run_recorder.h"

#include <cstdio>

#include "harness/trace/event_log.h"

namespace dlreset::variants {

namespace {
constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

std::uint64_t fnv1a(std::uint64_t digest, std::int64_t value) {
  for (int byte = 0; byte < 8; ++byte) {
    digest ^= (static_cast<std::uint64_t>(value) >> (8 * byte)) & 0xff;
    digest *= kFnvPrime;
  }
  return digest;
}
}  // namespace

std::string RunRecorder::hex(std::uint64_t digest) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(digest));
  return text;
}

void RunRecorder::on_sanity_check_start() { sanity_start_s_ = trace::monotonic_now_s(); }

void RunRecorder::on_sanity_check_end() { sanity_check_seconds_ = trace::monotonic_now_s() - sanity_start_s_; }

void RunRecorder::on_train_epoch_start(int /*epoch*/, std::int64_t /*num_batches*/) {
  current_ = EpochRecord{};
  current_.train_order_digest = kFnvOffset;
  val_loss_sum_ = 0.0;
  current_.start_s = trace::monotonic_now_s();
}

void RunRecorder::on_train_batch_end(const data::Batch& batch, std::int64_t /*batch_idx*/, double loss) {
  current_.train_loss += loss;
  ++current_.train_batches;
  current_.train_samples += batch.size();
  for (const std::int64_t index : batch.indices) {
    current_.train_order_digest = fnv1a(current_.train_order_digest, index);
  }
}

void RunRecorder::on_validation_start(lightning::RunningStage stage, std::int64_t /*num_batches*/) {
  validating_ = stage == lightning::RunningStage::validating;
}

void RunRecorder::on_validation_batch_end(const data::Batch& /*batch*/, std::int64_t /*batch_idx*/, double loss) {
  if (!validating_) return;
  val_loss_sum_ += loss;
  ++current_.val_batches;
}

void RunRecorder::on_train_epoch_end(int /*epoch*/) {
  if (current_.train_batches > 0) current_.train_loss /= static_cast<double>(current_.train_batches);
  if (current_.val_batches > 0) current_.val_loss = val_loss_sum_ / static_cast<double>(current_.val_batches);
  // Every rank ends every epoch here, so the collective lines up; its wait belongs to the epoch.
  if (reduce_mean_) current_.val_loss = reduce_mean_(current_.val_loss);
  current_.end_s = trace::monotonic_now_s();
  current_.seconds = current_.end_s - current_.start_s;
  epochs_.push_back(current_);
  validating_ = false;
}

}  // namespace dlreset::variants
