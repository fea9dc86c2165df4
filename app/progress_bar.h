// A Lightning-style progress bar on stderr.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "harness/lightning/callback.h"

namespace dlreset::app {

/// "Epoch 1: 34/50 [00:02<00:01, 16.2it/s, loss=0.512]", redrawn in place at most ten times a
/// second, then left on its own line when the epoch (and its validation) ends.
class ProgressBar : public lightning::Callback {
 public:
  explicit ProgressBar(std::FILE* out = stderr) : out_(out) {}

  void on_sanity_check_start() override;
  void on_train_epoch_start(int epoch, std::int64_t num_batches) override;
  void on_train_batch_end(const data::Batch& batch, std::int64_t batch_idx, double loss) override;
  void on_train_epoch_end(int epoch) override;
  void on_validation_start(lightning::RunningStage stage, std::int64_t num_batches) override;
  void on_validation_batch_end(const data::Batch& batch, std::int64_t batch_idx, double loss) override;
  void on_validation_end(lightning::RunningStage stage) override;

 private:
  using Clock = std::chrono::steady_clock;
  void draw(bool force);

  std::FILE* out_;
  std::string label_;
  std::int64_t done_ = 0;
  std::int64_t total_ = 0;
  double loss_ = 0.0;
  double val_loss_sum_ = 0.0;
  std::int64_t val_batches_ = 0;
  bool in_validation_ = false;
  Clock::time_point started_{};
  Clock::time_point last_draw_{};
};

}  // namespace dlreset::app
