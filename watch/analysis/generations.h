// Sets of workers that start together (generations), and the respawns among them: a set that
// ended and was replaced by a new one while the program ran on.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "watch/tree/process_record.h"

namespace dlreset::watch {

struct GenerationOptions {
  /// A worker starting this long after its generation's first no longer joins it. Workers of one
  /// DataLoader iterator start within milliseconds of each other (even with spawn, which does
  /// not wait for the interpreter); two loaders' sets started seconds apart stay apart.
  double window_s = 1.0;
  /// How late a start may be read. The events connector stamps starts exactly (0); polling
  /// finds a process up to one interval after it started and dates it no later than that look.
  double start_uncertainty_s = 0.0;
};

struct Generation {
  int index = 0;           ///< 1, 2, ... in order of start.
  pid_t parent = 0;        ///< The process whose workers they are.
  std::string loader_key;  ///< Their loader, where the hook named it (ProcessRecord::loader_key).
  WorkerStart start = WorkerStart::none;
  std::vector<std::size_t> members;  ///< Indices into the records.
  double start_s = 0.0;              ///< The first member's start.
  std::optional<double> end_s;       ///< The last member's end; empty if one outlived the watch.
  double cpu_s = 0.0;                ///< All members' CPU time.
  /// It replaced workers of the same parent that ended since the previous generation started:
  /// how many. A generation with any is a respawn.
  int replaced = 0;
};

struct Respawn {
  int generation = 0;   ///< The new generation's index.
  double time_s = 0.0;  ///< When it started.
  int replaced = 0;     ///< Workers it replaced.
  int started = 0;      ///< Workers it started.
};

struct GenerationReport {
  std::vector<Generation> generations;
  std::vector<Respawn> respawns;
  int workers = 0;
};

/// Groups the workers among `records` (classified already) into generations, per parent (and per
/// iterator, where the hook named it): a worker joins the newest generation of its parent when it
/// started within the window of that generation's first start and before any of its members
/// ended. A worker that ended is replaced by the first later generation of the same parent (and
/// loader, where named) that started after its end, unless it was not meant to last
/// (ProcessRecord::meant_to_last): a loader without persistent workers starts new ones at every
/// iter() by design, and they replace nothing that should have been kept.
GenerationReport find_generations(const std::vector<ProcessRecord>& records, const GenerationOptions& options = {});

}  // namespace dlreset::watch
