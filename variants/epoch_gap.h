// The time between two passes of one loader, split as `dlreset watch` splits it (docs/watch.md,
// "Where the time went"): what `dlreset run` reports as its epoch gaps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/data/pass_times.h"
#include "harness/trace/event_log.h"

namespace dlreset::variants {

/// From the return of one pass's last batch to the return of the next pass's first batch. The
/// three parts do not overlap and add up to `total_s`.
struct EpochGap {
  double total_s = 0.0;
  /// The old workers' shutdown: from the first of them told to exit to the last one reaped
  /// (their worker_shutdown and worker_exit events), within the gap.
  double shutdown_s = 0.0;
  /// The new workers' start: from the iter() that started them to the last one ready (its
  /// dataset_loaded, or its worker_started where it loaded nothing), within the gap and outside
  /// the shutdown. 0 where the pass kept its workers or has none.
  double startup_s = 0.0;
  /// The rest: the first batch's own fetch.
  double first_fetch_s = 0.0;
};

/// A loader's gaps, added up: the counts say in how many of them workers came and went.
struct EpochGaps {
  std::int64_t gaps = 0;
  /// Gaps whose pass started new workers (PassStart::new_workers).
  std::int64_t gaps_starting_workers = 0;
  /// Gaps that spent time in an old workers' shutdown (shutdown_s above 0).
  std::int64_t gaps_with_shutdown = 0;
  double total_s = 0.0;
  double shutdown_s = 0.0;
  double startup_s = 0.0;
  double first_fetch_s = 0.0;

  /// `started_workers`: the gap's pass started new workers.
  void add(const EpochGap& gap, bool started_workers);
};

/// The gap before each of `passes` (one loader's, in the order their iter() came), from the
/// events of the loader named `loader` in `events` (the fit's event log): empty for the first
/// pass, and where either pass returned no batch or the two overlapped. Reads no clock: the
/// passes' own times and the events' bound every part.
std::vector<std::optional<EpochGap>> epoch_gaps_of(const std::vector<data::PassTimes>& passes,
                                                   const std::vector<trace::Event>& events, const std::string& loader);

/// `gaps`, one for each of `passes` (epoch_gaps_of), added up.
EpochGaps sum_epoch_gaps(const std::vector<data::PassTimes>& passes, const std::vector<std::optional<EpochGap>>& gaps);

}  // namespace dlreset::variants
