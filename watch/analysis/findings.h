// What a watch found, each as a count that a gate holds against a limit: one count a check of the
// table in watch/analysis/checks/checks.h, each check in its own file beside it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "watch/analysis/generations.h"
#include "watch/analysis/input_wait.h"
#include "watch/analysis/python_view.h"
#include "watch/hook/fd_counts.h"
#include "watch/tree/watcher.h"

namespace dlreset::watch {

/// One check of the table (watch/analysis/checks/checks.h): a count, and the sentences (and hook events) behind
/// it.
struct Check {
  explicit Check(std::string check_name) : name(std::move(check_name)) {}
  std::string name;  ///< Its CheckSpec::name: "respawns", "late_set_epoch".
  long count = 0;
  bool seen = true;  ///< False where this watch could not see it (a Python check without the hook).
  /// Why it could not see, where the hook was on: "pid 812 lost 3 of its hook's events".
  std::string unseen_why;
  /// What its gate holds where that is not the count (CheckFlags::limit): a fraction, seconds;
  /// empty where nothing was measured.
  std::optional<double> measure;
  std::vector<std::string> details;
  std::vector<std::size_t> events;  ///< Indices into the hook events behind the details.
  /// Where a finding has an end as well as a start (an extra iterator's pass): the events that
  /// ended what `events` began, whose whole stacks the summary prints.
  std::vector<std::size_t> ended;
};

/// The most workers alive at once, and whose they were then.
struct LivePeak {
  int workers = 0;
  double time_s = 0.0;
  /// Each owner's share at that moment: "L1 (LazyDataset, ...)", or "workers of pid N" where the
  /// hook did not name their loader.
  std::vector<std::pair<std::string, int>> by_owner;
  /// Loaders without persistent workers that had workers of two passes alive at that moment
  /// ("L1"): the next pass started its workers before torch ended the last pass's, which it
  /// does only when that pass's iterator is collected. Ordinary torch, not a leak.
  std::vector<std::string> overlapping;
};

/// "the next pass of L1 (not persistent) started its workers before the last pass's workers had
/// ended": why the peak was higher than the loaders' workers; empty where no pass overlapped.
std::string overlap_cause(const LivePeak& peak);

/// A worker killed by a signal, and what the watcher's evidence says ran out or sent it.
struct WorkerDeath {
  std::size_t record = 0;  ///< Its index in the watch's processes (whose `evidence` it reads).
  int signal = 0;
  /// Who or what: "shm" (a bus error: /dev/shm), "oom" (the kernel's OOM killer), "outside"
  /// (sent from outside the program), "crash" (the worker's own fault), "shutdown" (while the
  /// program shut it down).
  std::string cause;
  std::optional<std::size_t> shutdown_event;  ///< The hook's `_shutdown_workers` of its iterator before it.
  std::string sentence;                       ///< What the summary says of it.
};

/// One type of descriptor that grew at every pass of one process's loaders of one kind (the
/// fd_growth check's, which the JSON shows).
struct FdGrowth {
  pid_t pid = 0;
  std::string loader;  ///< The kind's first loader ("L1"); empty where the hook did not name it.
  FdType type = FdType::pipe;
  /// Each pass of the kind, in order: its begin event (an index into the hook events) and the
  /// type's count there.
  std::vector<std::pair<std::size_t, long>> samples;
  long passes_after_first = 0;  ///< The boundaries the growth was counted over.
  long growth = 0;              ///< Summed over those boundaries: what piled up over the job.
  long least = 0;               ///< The least and the most it grew at one boundary.
  long most = 0;
  std::string sentence;  ///< What the summary says of it.
};

/// One process's memory over its life, from the watch's memory samples (the worker_memory
/// check's, which the JSON shows).
struct WorkerMemoryTrace {
  std::size_t record = 0;  ///< Its index in the watch's processes.
  /// A worker's loader, "L1 of pid 812", or its parent, "pid 812", where the hook did not name
  /// the loader; empty for a training process.
  std::string owner;
  /// Its first and last samples, and the one of its largest PSS, each with its time.
  std::pair<double, MemoryUse> first, last, peak;
  long samples = 0;
};

/// The workers of one loader (or one parent) whose private memory grew while their shared memory
/// fell: they copied what they read of what they inherited by fork (the copy_on_read check's).
struct CopyOnRead {
  std::string owner;                       ///< As WorkerMemoryTrace::owner.
  std::string dataset;                     ///< The dataset's class ("ListDataset"); empty without the hook.
  std::vector<std::size_t> workers;        ///< Indices into WorkerMemory::workers.
  std::uint64_t private_growth_bytes = 0;  ///< The mean over its workers, first sample to last.
  std::uint64_t shared_fall_bytes = 0;     ///< The same, of their shared memory.
  std::string sentence;                    ///< What the summary says of it.
};

/// The workers' memory: each worker's, the most the workers alive together held, and the
/// workers that copied what they read.
struct WorkerMemory {
  std::vector<WorkerMemoryTrace> workers;   ///< Each worker sampled, in the order it started.
  std::vector<WorkerMemoryTrace> training;  ///< The program and its ranks (roles root, program).
  std::optional<std::size_t> largest;       ///< The worker of the largest PSS, an index into workers.
  /// The most PSS the workers sampled at one tick held together, when, and how many they were.
  std::uint64_t peak_live_bytes = 0;
  double peak_live_s = 0.0;
  int peak_live_workers = 0;
  std::vector<CopyOnRead> copy_on_read;
};

/// Every check of the table, in its order, with nothing found yet.
std::vector<Check> unfound_checks();

/// The checks' counts, one a row of the table, and the facts they share with the rest of the
/// report: the peak of live workers, the workers alive at each epoch, the causes of respawns.
struct Findings {
  std::vector<Check> checks = unfound_checks();  ///< One a check of the table, in its order.
  LivePeak peak;
  /// Workers alive at each epoch line (--epoch-regex) and still alive halfway through its epoch:
  /// a count that grows from epoch to epoch is a leak even where the hook cannot name the loader.
  std::vector<int> live_at_epochs;
  /// Each respawn's cause, grouped: the stack that stopped the generation it replaced (indices
  /// into the hook events), with the respawns it caused.
  struct Cause {
    StackGroup stopped;         ///< The events that stopped each replaced generation.
    std::vector<int> respawns;  ///< Generation indices.
  };
  std::vector<Cause> respawn_causes;
  int respawns_without_cause = 0;  ///< Respawns whose old workers the hook did not see stopped.
  /// The loop's waits for data (the input_wait check's measure, which its summary and JSON show).
  InputWait input_wait;
  /// The workers killed by a signal, each with its evidence (the worker_deaths check's, which
  /// the JSON shows).
  std::vector<WorkerDeath> worker_deaths;
  /// The descriptors that grew at every pass (the fd_growth check's, which the JSON shows).
  std::vector<FdGrowth> fd_growth;
  /// The workers' memory (the worker_memory and copy_on_read checks', which the JSON shows).
  WorkerMemory memory;

  /// The check named `name`; throws std::logic_error where the table has none of that name.
  const Check& check(const std::string& name) const;
};

/// What every check's finder reads.
struct CheckInput {
  const WatchResult& result;
  const GenerationReport& generations;
  const PythonView& python;
};

/// Runs every check of the table, in its order. A check that needs the Python hook is not seen
/// where the hook was off and a Python process ran.
Findings analyse_findings(const WatchResult& result, const GenerationReport& generations, const PythonView& python);

}  // namespace dlreset::watch
