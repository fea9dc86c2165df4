// Where one pass of a DataLoader spent its time: what `dlreset run` reports as the wait for data.
#pragma once

#include <cstdint>

namespace dlreset::data {

/// What a pass's first batch waited for: workers that the pass's iter() started (a new
/// multi-process iterator: every pass under Lightning 1.5.0, or without persistent workers),
/// or none started (a persistent iterator reset, or a loader without workers).
enum class PassStart { new_workers, workers_kept };

/// Where one pass of a loader (from iter() to its end) spent its time, on the thread that
/// consumes it. Two clock reads per next() (at the call and at the return) fill it; iter()
/// adds two more per pass.
///
/// A pass of N batches that is run to its end makes N + 1 next() calls (the last returns the
/// end) and N steps; a pass cut after N batches (a batch limit) makes N calls and N - 1 steps,
/// since no next() call ends its last step.
struct PassTimes {
  PassStart start = PassStart::workers_kept;
  /// Monotonic clock (trace::monotonic_now_s, the event log's) when iter() was called.
  double iter_called_s = 0.0;
  /// Inside iter(): starting the workers, or resetting the kept ones.
  double iter_s = 0.0;
  /// From iter() to the first batch's return (iter_s included); 0 while none has come.
  double first_batch_s = 0.0;
  /// Monotonic clock when the pass's latest batch returned (its last, once the pass is over);
  /// 0 while none has come. The clock read that ends the wait, kept: from it to the next
  /// pass's first batch runs the epoch gap (variants/epoch_gap.h).
  double last_batch_returned_s = 0.0;
  /// wait: inside next(), from the call to the return of a batch or of the end.
  double wait_s = 0.0;
  /// The part of wait_s spent in the next() call that returned the first batch: the wait "at
  /// the start", whose cause is `start`.
  double wait_at_start_s = 0.0;
  /// step: from a batch's return to the next next() call, the loop's own work.
  double step_s = 0.0;
  std::int64_t batches = 0;
  std::int64_t next_calls = 0;
  std::int64_t steps = 0;

  /// The wait of every later batch, and of the end: the steady state.
  double steady_wait_s() const { return wait_s - wait_at_start_s; }
};

}  // namespace dlreset::data
