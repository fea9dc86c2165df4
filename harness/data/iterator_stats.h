// One look at a multi-process iterator's counts, for tests that compare it with torch's step by
// step and for benchmarks that put the counts beside their times.
#pragma once

#include <cstdint>

#include "harness/data/core/worker/transport/transport_stats.h"
#include "harness/data/pass_times.h"

namespace dlreset::data::detail {

/// MultiProcessingDataLoaderIter::stats().
struct IteratorStats {
  /// Index batches sent and not yet come back: at most prefetch_factor × num_workers, and
  /// exactly that after `reset` while the sampler has that many batches left.
  int tasks_outstanding = 0;
  /// `_send_idx - _rcvd_idx`: index batches sent and not yet handed out, whether or not their
  /// result has come back. Unlike tasks_outstanding it does not depend on which worker answered
  /// first, so it can be compared with torch's.
  std::int64_t index_batches_pending = 0;
  /// Results that came back before their turn and were kept in _task_info until it came: the
  /// proof that workers finished out of order while batches still went out in order.
  std::int64_t results_held_for_their_turn = 0;
  /// How the workers' batches travelled; zeros before the workers start.
  TransportStats transport;
  /// The current pass's times so far (BaseDataLoaderIter::pass_times()).
  PassTimes pass;
};

}  // namespace dlreset::data::detail
