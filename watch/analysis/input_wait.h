// Where the training loop's time went: the hook's pass_waits events (the time inside next(), the
// wait, and between a batch's return and the next call, the step) set against the passes, the
// worker generations and the workers' worker_ready events. docs/watch.md, "The input wait",
// defines the terms.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "watch/analysis/generations.h"
#include "watch/analysis/python_view.h"
#include "watch/hook/hook_event.h"
#include "watch/tree/process_record.h"

namespace dlreset::watch {

/// What the first batch of a pass waited for.
enum class WaitCause {
  new_workers,   ///< The pass started a new generation of workers (iterator_made with workers).
  workers_kept,  ///< A persistent iterator's reset: its workers were there already.
  no_workers,    ///< A loader with num_workers=0 loads in the loop's own process.
  unknown,       ///< The hook did not say how the pass's iterator was made.
};

/// "new_workers", "workers_kept", "no_workers", "unknown".
const char* to_string(WaitCause cause);

/// The time between two passes of one loader in one process: from the last batch of the one to
/// the return of the first batch of the next, split by what the tree and the hook saw in it.
struct EpochGap {
  double total_s = 0.0;
  /// To the exit of the old generation's last worker, where it exited in the gap.
  double shutdown_s = 0.0;
  /// The new workers' start: their fork to the last one's worker_ready, within the gap.
  double startup_s = 0.0;
  double first_fetch_s = 0.0;  ///< The rest: the first batch's own fetch.
};

/// One pass of one iterator, as its pass_waits event measured it.
struct PassWait {
  std::size_t event = 0;                 ///< Its pass_waits event (an index into the hook events).
  std::optional<std::size_t> pass_view;  ///< Its PythonView::passes entry, where the view knows the pass.
  pid_t pid = 0;
  std::optional<int> rank;
  std::string loader;  ///< "L1"; empty where the hook did not know it.
  std::string iterator;
  long number = 0;  ///< The iterator's pass number, from 1.
  WaitCause cause = WaitCause::unknown;
  /// new_workers: the generation it started (index from 1), 0 where the tree did not see it.
  int generation = 0;
  /// new_workers: from the fork of its first worker to the last one's worker_ready.
  std::optional<double> startup_s;
  /// new_workers: the reset that stopped the same loader's generation before this one (an index
  /// into the hook events): the stack that made new workers necessary. Empty where the old
  /// generation ended on its own, or there was none.
  std::optional<std::size_t> reset_event;
  double first_wait_s = 0.0;   ///< 0 where no batch came.
  double steady_wait_s = 0.0;  ///< wait_s - first_wait_s.
  double wait_s = 0.0;
  double step_s = 0.0;
  std::optional<double> first_batch_s;
  std::optional<EpochGap> gap;  ///< From the previous pass of the same loader in the same process.

  double fraction() const;  ///< wait / (wait + step); 0 without time.
};

/// The longest head-of-line blocked wait of a sum of passes, and the pass it was in.
struct WorstBlocked {
  BlockedWait wait;
  pid_t pid = 0;
  std::string loader;  ///< As LoaderWait::loader: the iterator's key where the hook did not name the loader.
  long pass = 0;
};

/// Waits summed over passes: a loader's, a process's, the job's.
struct WaitTotals {
  double wait_s = 0.0;
  double step_s = 0.0;
  double new_workers_s = 0.0;   ///< First-batch waits of passes that started new workers.
  double workers_kept_s = 0.0;  ///< First-batch waits of passes whose workers were kept.
  double no_workers_s = 0.0;    ///< First-batch waits without workers.
  double unknown_s = 0.0;       ///< First-batch waits of passes the hook did not see made.
  double steady_s = 0.0;        ///< Every later batch's wait.
  int passes = 0;
  int new_worker_starts = 0;  ///< Passes that started new workers and got a batch.
  int kept_starts = 0;
  int respawn_starts = 0;  ///< Of the new_worker_starts, those whose old workers a reset stopped.
  std::vector<double> first_batches_s;
  /// The steady-state waits' buckets, summed (index: the bucket, PassWaits::hist).
  std::vector<long> hist = std::vector<long>(41, 0);
  std::optional<double> max_steady_s;
  /// The head-of-line blocked waits (PassWaits::blocked_waits), their sum and the longest.
  long blocked_waits = 0;
  double blocked_wait_s = 0.0;
  std::optional<WorstBlocked> worst_blocked;

  void add(const PassWait& pass, const PassWaits& waits);
  /// The steady-state waits of 2^10 us or more (buckets 11 and up): those the hook read for
  /// head-of-line blocking.
  long slow_waits() const;
  double fraction() const;  ///< wait / (wait + step); 0 without time.
  std::optional<double> median_first_batch_s() const;
  /// The upper bound of the bucket that holds the `quantile` of the steady-state waits (the
  /// longest wait, where it is less); empty without a steady-state wait.
  std::optional<double> steady_quantile_s(double quantile) const;
};

/// A loader's waits in one process.
struct LoaderWait {
  pid_t pid = 0;
  std::optional<int> rank;
  std::string loader;  ///< "L1", or the iterator's key where the hook did not name the loader.
  WaitTotals totals;
  /// Threads other than the main one that read it (PassWaits::thread), in the order first seen.
  std::vector<std::string> threads;
};

/// A process's (a rank's) waits.
struct ProcessWait {
  pid_t pid = 0;
  std::optional<int> rank;
  WaitTotals totals;
};

struct InputWait {
  std::vector<PassWait> passes;  ///< In the order their events came.
  std::vector<LoaderWait> loaders;
  std::vector<ProcessWait> processes;  ///< In the order of their ranks, then pids.
  WaitTotals job;
  /// The longest first batch of any pass (an index into `passes`).
  std::optional<std::size_t> longest_first_batch;
  /// Why the accounting misses time, one sentence each: the hook off, events lost, passes the
  /// hook saw begin without their pass_waits. Empty: every pass the hook saw was measured.
  std::vector<std::string> incomplete;
};

/// "rank 1 (pid 813) waited 41% of its time, the other rank 5%: rank 1 (pid 813) is an input
/// straggler": the rank of `wait.processes` that waited far more of its time than every other
/// one did (watch/analysis/checks/input_wait.cpp holds the rule); empty where none stands out.
std::string input_straggler(const InputWait& wait);

/// The loop's waits, from the hook's events in `python` (PythonView::events), the tree's
/// `records` and its `generations`.
InputWait analyse_input_wait(const std::vector<ProcessRecord>& records, const GenerationReport& generations,
                             const PythonView& python);

}  // namespace dlreset::watch
