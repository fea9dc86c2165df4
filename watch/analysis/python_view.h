// The Python hook's events set against the process tree: which Python processes loaded the hook
// (and why the others did not), the loaders and their iterators' passes, and the stack that made
// and the stack that stopped each generation of workers.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "watch/analysis/generations.h"
#include "watch/hook/hook_event.h"
#include "watch/tree/process_record.h"

namespace dlreset::watch {

/// A Python interpreter of the tree and what its hook said.
struct HookedProcess {
  pid_t pid = 0;
  std::string cmdline;
  bool hello = false;    ///< Its hook started.
  bool patched = false;  ///< It imported torch.utils.data, and the hook's properties went in.
  std::string torch_version;
  std::optional<int> rank;
  std::optional<int> local_rank;
  std::vector<std::string> unseen;  ///< What the hook could not watch in it, and why.
  std::vector<std::string> errors;  ///< The hook's own errors ("where: error").
  long events_lost = 0;             ///< Gaps in its events' numbers: dropped, or still waiting at its end.
  /// Without a hello: the likely reason ("run with -I, which ignores PYTHONPATH").
  std::string why_not;
};

/// One DataLoader of one process, as the hook named it.
struct LoaderView {
  pid_t pid = 0;
  std::string key;  ///< "L1", the process's own name for it.
  LoaderSettings settings;
  std::optional<double> made_s;  ///< When the DataLoader was made, where the hook saw it.
  int iterators_made = 0;
  int passes = 0;                  ///< Iterators made and persistent iterators reset: one pass each.
  int dropped = 0;                 ///< `_iterator` set to None, replaced or deleted while it held one.
  int shutdowns = 0;               ///< Workers shut down (by anyone, __del__ included).
  std::vector<pid_t> worker_pids;  ///< Every worker its iterators started.

  /// "L1 (LazyDataset, batch 64, 2 fork workers, persistent) in pid 812"
  std::string describe() const;
  /// "L1 (LazyDataset, batch 64, 2 fork workers, persistent)": describe() without the process.
  std::string identity() const;
  /// "LazyDataset": the dataset's class without its module.
  std::string dataset_class() const;
  /// "L1 of pid 812", where the loader was described already.
  std::string short_name() const;
  /// The loader an event names, with the fields it carries (loader_made, iterator_made,
  /// iterator_dropped carry them all); its counts start at zero.
  static LoaderView of(const HookEvent& event);

  /// Loaders of one identity look alike: the same dataset class, batch size, workers and
  /// persistence in the same process; a loader made again for every evaluation is one of them.
  bool same_kind(const LoaderView& other) const;
};

/// One pass of an iterator over its sampler: from iter() to the next iter() of the same
/// iterator, or to its end.
struct PassView {
  pid_t pid = 0;
  std::string loader;
  std::string iterator;
  std::size_t begin_event = 0;  ///< Its iterator_made or iterator_reset event.
  /// The event that ended it (a reset, a shutdown, a drop), where one did; what it says of the
  /// pass: batches handed out, batches asked of the workers and not handed out (in_flight), and
  /// of those the ones known to be made (ready), which the end threw away. The rest of
  /// in_flight may have been made too: at most in_flight were thrown away.
  std::optional<std::size_t> end_event;
  std::optional<long> yielded;
  std::optional<long> in_flight;
  std::optional<long> ready;
};

/// A stack and the events that had it.
struct StackGroup {
  std::vector<std::size_t> events;  ///< Indices into the hook events, in order.
};

struct PythonView {
  std::string hook;  ///< "on", or why it was off.
  std::vector<HookEvent> events;
  std::vector<HookedProcess> processes;
  std::vector<LoaderView> loaders;
  std::vector<PassView> passes;
  /// For each generation (by index - 1): the event of the iterator that started it, and the
  /// event that stopped it, where the hook saw them.
  std::vector<std::optional<std::size_t>> generation_made;
  std::vector<std::optional<std::size_t>> generation_stopped;
  int malformed = 0;

  /// The loader a worker pid belongs to, where the hook named its iterator.
  const LoaderView* loader_of_worker(pid_t worker) const;
  const LoaderView* loader(pid_t pid, const std::string& key) const;
};

/// Names each worker's loader and iterator (ProcessRecord::loader_key, iterator_key) from the
/// hook's iterator_made events, which list the workers' pids, and says whether it was meant to
/// last (ProcessRecord::meant_to_last): its loader was persistent.
void name_workers(std::vector<ProcessRecord>& records, const std::vector<HookEvent>& events);

/// Builds the view. `hook_dir` is the folder put on PYTHONPATH (to tell a replaced PYTHONPATH).
PythonView analyse_python(std::string hook, std::vector<HookEvent> events, int malformed,
                          const std::vector<ProcessRecord>& records, const GenerationReport& generations,
                          const std::string& hook_dir);

/// The heading of a traceback for the event that stopped workers or dropped an iterator:
/// "iterator of loader L1 (LazyDataset, batch 64, 2 workers) in pid 812, rank 0 set to None".
std::string reset_heading(const PythonView& view, const HookEvent& event);
/// The heading for events grouped by their stack (group.events, indices into view.events): the
/// first event's, naming every process of the group, so that the ranks of one job which all
/// ran the same line read "in pids 812 (rank 0) and 813 (rank 1)" whichever came first.
std::string reset_heading(const PythonView& view, const StackGroup& group);

/// Whether an event is the program stopping an iterator's workers or dropping a loader's
/// iterator, rather than an iterator ending on its own (exhausted without persistence, or
/// collected: `_next_data` and `__del__` call `_shutdown_workers` then).
bool is_reset(const HookEvent& event);

/// Two stacks are the same when every frame has the same file, line and function.
bool same_stack(const std::vector<StackFrame>& a, const std::vector<StackFrame>& b);

/// Groups `events` (indices) by their stack, in the order each stack was first seen.
std::vector<StackGroup> group_by_stack(const PythonView& view, const std::vector<std::size_t>& events);

/// "train_loop.py:51 in reset_like_lightning_1_5_0": the innermost frame of the program's own,
/// outside torch and the standard library's multiprocessing; the innermost one when all are.
std::string program_frame(const std::vector<StackFrame>& stack);

/// Why a Python process with no hello did not load the hook, from its arguments and environment.
std::string why_no_hook(const PythonStart& start, const std::string& hook_dir);

}  // namespace dlreset::watch
