// Where a fit's time went while it consumed its loaders: the passes' waits and steps
// (harness/data/pass_times.h) added up per epoch, for `dlreset run`'s report and the tests.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/data/pass_times.h"

namespace dlreset::variants {

/// The passes of some span of a fit (an epoch, the sanity check, the whole fit), added up.
/// Every wait is split by its cause: at the start of a pass that started new workers, at the
/// start of a pass that started none (its workers were kept, or it has none), or in the steady
/// state (every later batch, and the end).
struct DataTime {
  double wait_s = 0.0;
  double step_s = 0.0;
  /// Inside iter(): starting workers, or resetting kept ones; neither wait nor step.
  double iter_s = 0.0;
  double wait_at_start_new_workers_s = 0.0;
  double wait_at_start_workers_kept_s = 0.0;
  double wait_steady_s = 0.0;
  std::int64_t passes = 0;
  /// Passes whose iter() started new workers, and passes whose iter() started none.
  std::int64_t starts_new_workers = 0;
  std::int64_t starts_workers_kept = 0;
  std::int64_t batches = 0;
  /// Each pass's time from iter() to its first batch, for the passes that returned one.
  std::vector<double> first_batch_s;

  void add(const data::PassTimes& pass);
  /// wait / (wait + step); 0 where neither was measured.
  double wait_fraction() const;
  /// The median of first_batch_s (the mean of the middle two for an even count); 0 if empty.
  double median_first_batch_s() const;
};

/// A span of the fit on the monotonic clock (trace::monotonic_now_s): a pass belongs to the span
/// in which its iter() was called.
struct TimeSpan {
  double start_s = 0.0;
  double end_s = 0.0;
};

/// The fit's data time, whole and split.
struct FitDataTime {
  DataTime whole_fit;            ///< Every pass of both loaders.
  DataTime sanity_check;         ///< Passes whose iter() came before the first epoch.
  std::vector<DataTime> epochs;  ///< One per span given, in order.
};

/// Adds `passes` (those of every loader of the fit) to the span their iter() fell in.
FitDataTime data_time_of(const std::vector<const std::vector<data::PassTimes>*>& passes,
                         const std::vector<TimeSpan>& epochs);

}  // namespace dlreset::variants
