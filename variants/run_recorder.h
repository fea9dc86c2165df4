// Records what a fit did, epoch by epoch: the figures `dlreset run` reports and tests compare.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/lightning/callback.h"

namespace dlreset::variants {

struct EpochRecord {
  double seconds = 0.0;  ///< From the epoch's start to the end of its validation.
  double start_s = 0.0;  ///< Monotonic clock (trace::monotonic_now_s), like the event log's.
  double end_s = 0.0;
  double train_loss = 0.0;  ///< Mean over the epoch's training batches.
  double val_loss = 0.0;    ///< Mean over the epoch's validation batches (0 if none ran).
  std::int64_t train_batches = 0;
  std::int64_t train_samples = 0;
  std::int64_t val_batches = 0;
  /// FNV-1a over the training samples' dataset indices, in the order they came: equal digests
  /// mean the same samples in the same order.
  std::uint64_t train_order_digest = 0;
};

/// A Callback that fills one EpochRecord per training epoch, plus the sanity check's time.
/// Every variant calls the same hooks, so records of different variants compare directly.
class RunRecorder : public lightning::Callback {
 public:
  /// `reduce_mean` (TrainerOptions::reduce_mean, set on a rank of a multi-rank job) turns each
  /// epoch's validation loss into the mean over the ranks, as a metric logged with
  /// sync_dist=True is; every rank then records the same value.
  explicit RunRecorder(std::function<double(double)> reduce_mean = {}) : reduce_mean_(std::move(reduce_mean)) {}

  void on_sanity_check_start() override;
  void on_sanity_check_end() override;
  void on_train_epoch_start(int epoch, std::int64_t num_batches) override;
  void on_train_batch_end(const data::Batch& batch, std::int64_t batch_idx, double loss) override;
  void on_train_epoch_end(int epoch) override;
  void on_validation_start(lightning::RunningStage stage, std::int64_t num_batches) override;
  void on_validation_batch_end(const data::Batch& batch, std::int64_t batch_idx, double loss) override;

  const std::vector<EpochRecord>& epochs() const { return epochs_; }
  double sanity_check_seconds() const { return sanity_check_seconds_; }

  /// The digest as 16 hex digits.
  static std::string hex(std::uint64_t digest);

 private:
  std::function<double(double)> reduce_mean_;
  std::vector<EpochRecord> epochs_;
  EpochRecord current_;
  double val_loss_sum_ = 0.0;
  bool validating_ = false;  ///< Validation batches of the sanity check are not an epoch's.
  double sanity_start_s_ = 0.0;
  double sanity_check_seconds_ = 0.0;
};

}  // namespace dlreset::variants
