// One fit of one variant, measured: what `dlreset run`, the tests and the benchmarks all read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "harness/data/data_loader.h"
#include "harness/trace/event_log.h"
#include "variants/data_time.h"
#include "variants/epoch_gap.h"
#include "variants/run_recorder.h"
#include "variants/variant.h"

namespace dlreset::variants {

/// What happened to one loader during a fit.
struct LoaderReport {
  data::LoaderCounters counters;
  std::int64_t resets_during_fit = 0;   ///< iterator_reset events in phase "fit"
  std::int64_t resets_at_teardown = 0;  ///< iterator_reset events in phase "teardown"
  bool iterator_null_at_end = false;    ///< The loader's `_iterator` after the fit returned.
  /// Every pass of the loader during the fit, in order: where its time went.
  std::vector<data::PassTimes> passes;
  /// The epoch gap before each pass, one for each of `passes` (epoch_gaps_of): none before the
  /// first.
  std::vector<std::optional<EpochGap>> gaps;
};

struct FitReport {
  Variant variant = Variant::fixed;
  LoaderReport train;
  LoaderReport val;
  std::vector<EpochRecord> epochs;
  /// Both loaders' passes, added up for the whole fit, the sanity check and each epoch.
  FitDataTime data_time;
  double sanity_check_s = 0.0;
  double total_s = 0.0;   ///< The whole fit: sanity check, epochs and teardown.
  double origin_s = 0.0;  ///< Monotonic time at which the fit started; events are later.
  /// Everything the event log holds for this fit (resets, worker lifecycles), in order.
  std::vector<trace::Event> events;
};

/// Clears the global event log, fits with `variant` (see variants::fit) and reports. The
/// options' callbacks run too, after the report's own recorder.
FitReport run_fit(Variant variant, lightning::LightningModule& model,
                  const std::shared_ptr<data::DataLoader>& train_dataloader,
                  const std::shared_ptr<data::DataLoader>& val_dataloader, lightning::TrainerOptions options);

}  // namespace dlreset::variants
