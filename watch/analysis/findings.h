// What a watch found, each as a count that a gate holds against a limit: respawns, the peak of
// live workers, leaked workers, extra iterators, and passes that drew their order before their
// epoch's set_epoch. The last three need the Python hook; the others come from the process tree.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "watch/analysis/generations.h"
#include "watch/analysis/python_view.h"
#include "watch/tree/watcher.h"

namespace dlreset::watch {

/// One check: a count, and the sentences (and hook events) behind it.
struct Check {
  explicit Check(std::string check_name) : name(std::move(check_name)) {}
  std::string name;  ///< "respawns", "live_workers", "leaked_workers", "extra_iterators", "late_set_epoch"
  long count = 0;
  bool seen = true;  ///< False where this watch could not see it (a Python check without the hook).
  std::vector<std::string> details;
  std::vector<std::size_t> events;  ///< Indices into the hook events behind the details.
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

struct Findings {
  Check respawns{"respawns"};
  Check live_workers{"live_workers"};
  Check leaked_workers{"leaked_workers"};
  Check extra_iterators{"extra_iterators"};
  Check late_set_epoch{"late_set_epoch"};
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
  /// For each extra iterator (extra_iterators.events holds the event that began its pass): the
  /// event that ended it, whose whole stack is the call that threw its pass away.
  std::vector<std::size_t> extra_iterators_ended;
  int respawns_without_cause = 0;  ///< Respawns whose old workers the hook did not see stopped.
  long batches_thrown_away = 0;    ///< By the extra iterators' passes: those known to be made.
  long batches_in_flight = 0;      ///< Asked of their workers: at most this many were thrown away.

  std::vector<const Check*> checks() const {
    return {&respawns, &live_workers, &leaked_workers, &extra_iterators, &late_set_epoch};
  }
};

Findings analyse_findings(const WatchResult& result, const GenerationReport& generations, const PythonView& python);

}  // namespace dlreset::watch
