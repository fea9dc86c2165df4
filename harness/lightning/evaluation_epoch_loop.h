// Mirrors pytorch_lightning/loops/epoch/evaluation_epoch_loop.py @ 1.5.0.
#pragma once

#include <cstdint>
#include <memory>

#include "harness/lightning/base.h"
#include "harness/lightning/utilities.h"

namespace dlreset::lightning {

/// One advance is one validation batch, up to the run's batch limit.
class EvaluationEpochLoop : public Loop {
 public:
  bool done() const override { return batches_completed_ >= dl_max_batches_; }
  void reset() override;
  /// `_update_dataloader_iter(data_fetcher, batch_progress.current.ready)`: the same call the
  /// training epoch makes, with the same consequence in 1.5.0 for the validation workers.
  DLRESET_TRACED void on_run_start(const RunArgs& args) override;
  void advance(const RunArgs& args) override;

 private:
  std::int64_t dl_max_batches_ = 0;
  std::int64_t batches_ready_ = 0;
  std::int64_t batches_completed_ = 0;
  /// Kept until the next run attaches a new fetcher, as in Lightning: it holds the last
  /// fetcher and, through it, the loader's iterator.
  std::unique_ptr<FetcherEnumerator> dataloader_iter_;
};

}  // namespace dlreset::lightning
