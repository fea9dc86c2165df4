// One report of the Python hook (watch/hook/python/sitecustomize.py) from a process of the watched
// tree: what the program did to a DataLoader's iterator or a sampler's epoch, and the Python stack
// that did it. docs/watch.md ("The Python hook") lists the fields of each kind.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "watch/hook/fd_counts.h"

namespace dlreset::watch {

/// What a DataLoader was made with, as the hook read it: the settings that tell loaders apart.
struct LoaderSettings {
  std::string dataset;  ///< The dataset's class, with its module ("train.Squares").
  std::optional<int> batch_size;
  std::optional<int> workers;
  bool persistent = false;
  std::string start_method;  ///< "fork", "spawn" or "forkserver"; empty without workers.
};

/// One frame of a Python stack, as a traceback prints it.
struct StackFrame {
  std::string file;
  int line = 0;
  std::string function;
  std::string code;  ///< The line's source text, stripped; empty when it could not be read.
};

enum class HookEventKind {
  hello,             ///< The hook started in a new interpreter.
  patched,           ///< torch.utils.data was imported and the hook's properties are in place.
  unseen,            ///< Something the hook cannot see (a loader class with its own `_iterator`).
  hook_error,        ///< The hook met an error of its own and stopped; the program went on.
  loader_made,       ///< A DataLoader was made (its __init__ set `_iterator` to None).
  iterator_made,     ///< A loader made a new iterator (with workers: they have started).
  iterator_reset,    ///< iter() on a persistent loader: its iterator begins a new pass.
  iterator_dropped,  ///< A loader's `_iterator` was set to None, replaced or deleted.
  workers_shutdown,  ///< `_shutdown_workers` stopped an iterator's workers.
  set_epoch,         ///< A DistributedSampler's epoch was set.
  pass_waits,        ///< A pass of an iterator ended: the time its loop spent in next() and between calls.
  worker_ready,      ///< A DataLoader worker has its dataset and is about to fetch its first batch.
  pass_begun,        ///< --hang-timeout: a pass began (its pass number in waits.pass).
  pass_beat,         ///< --hang-timeout: a pass hands out batches (waits.batches so far).
  unknown,           ///< A kind this watcher does not know (a newer hook).
};

const char* to_string(HookEventKind kind);

/// A wait for one worker's batch while the iterator held later batches of other workers,
/// received out of order: head-of-line blocking (docs/watch.md, "The input wait").
struct BlockedWait {
  long batch = 0;  ///< The batch waited for: the pass's count of batches handed out, from 1.
  double wait_s = 0.0;
  long ready = 0;  ///< The later batches of other workers received before it.
  /// The worker waited for, where torch's dealing of tasks names it exactly: empty where a worker
  /// had run out within the pass.
  std::optional<int> worker;
};

/// What a pass_waits event says of one pass: the loop's time inside next() (the wait) and
/// between a batch's return and the next call (the step). Times are CLOCK_MONOTONIC seconds.
/// docs/watch.md, "The input wait", defines each term.
struct PassWaits {
  long pass = 0;       ///< The iterator's pass number, from 1.
  std::string thread;  ///< The thread that called next() first in the pass.
  bool main_thread = true;
  long other_thread_calls = 0;  ///< next() calls of the pass on other threads (counted, not timed).
  double begun_s = 0.0;         ///< iter().
  long batches = 0;
  std::optional<double> first_batch_s;  ///< From iter() to the first batch's return.
  std::optional<double> first_wait_s;   ///< The wait of the call that returned the first batch.
  double wait_s = 0.0;                  ///< Every call that returned a batch, the first included.
  double step_s = 0.0;
  std::optional<double> last_batch_s;  ///< When the last batch was returned.
  std::optional<double> max_wait_s;    ///< The longest wait after the first.
  /// The waits after the first in log buckets (bucket, count): bucket 0 is under 1 us, bucket
  /// k >= 1 holds [2^(k-1), 2^k) us.
  std::vector<std::pair<int, long>> hist;
  /// Of the waits after the first of 2^10 us or more (buckets 11 and up), those that were blocked
  /// (BlockedWait), their sum and the longest; 0 and empty from a hook that did not count them.
  long blocked_waits = 0;
  double blocked_wait_s = 0.0;
  std::optional<BlockedWait> worst_blocked;
  std::string end;       ///< "reset", "shutdown", "freed" or "exit".
  bool stopped = false;  ///< The pass was seen to end in StopIteration.
};

struct HookEvent {
  HookEventKind kind = HookEventKind::unknown;
  pid_t pid = 0;
  /// CLOCK_MONOTONIC, as the hook read it (the watcher's clock too); the time it was received
  /// where the hook had no clock yet.
  double time_s = 0.0;
  std::optional<int> rank;        ///< RANK in the process's environment.
  std::optional<int> local_rank;  ///< LOCAL_RANK.
  long sequence = 0;              ///< The process's count of events, from 1.
  long lost_before = 0;           ///< Events of this process the socket could not take before this one.

  // The loader: all of it in loader_made, iterator_made and iterator_dropped; the key and
  // `settings.persistent` in workers_shutdown; the key alone in the others.
  std::string loader;  ///< The process's key for it ("L1"); empty when not known.
  std::string loader_class;
  LoaderSettings settings;

  // The iterator.
  std::string iterator;  ///< "I1", ...
  std::vector<pid_t> worker_pids;
  std::optional<long> yielded;    ///< Batches its pass in progress had handed out.
  std::optional<long> in_flight;  ///< Batches sent to workers and not yet handed out.
  /// Of those, the batches known to be made: received out of order, or waiting in the result
  /// queue. Empty where the iterator cannot tell; the rest of in_flight may or may not be.
  std::optional<long> ready;
  bool shut_down = false;  ///< Its workers had been shut down already.
  std::string how;         ///< iterator_dropped: "None", "replaced" or "deleted".
  std::string caller;      ///< workers_shutdown: the function that called it ("__del__").
  /// iterator_made of a loader with workers: the names of the Python threads alive beside the
  /// one that made it, just before its workers were started, but multiprocessing's queue feeders
  /// and torch's pin-memory threads (docs/watch.md, "Workers forked beside threads").
  std::vector<std::string> threads;
  /// iterator_made and iterator_reset (a pass's start): the process's open descriptors as the
  /// watcher counted them when the event arrived, not the hook; empty where /proc could not
  /// tell.
  std::optional<FdCounts> fds;

  // The sampler.
  std::string sampler;  ///< "S1", ...
  std::string sampler_class;
  std::optional<long> sampler_epoch;  ///< Its epoch when the pass drew its order.
  std::optional<long> epoch;          ///< set_epoch: the new epoch.
  std::optional<long> previous_epoch;
  /// set_epoch: the iterator of this sampler whose pass had drawn its order and handed out no
  /// batch yet, so that it runs with the epoch before; empty when there was none.
  std::string pending_iterator;
  std::optional<long> pending_epoch;  ///< The epoch that pass drew its order with.

  std::vector<StackFrame> stack;  ///< Outermost first, without the hook's own frames.
  int frames_omitted = 0;

  PassWaits waits;               ///< pass_waits.
  std::optional<int> worker_id;  ///< worker_ready.

  // hello, patched, unseen, hook_error; worker_ready (the training process).
  pid_t parent = 0;
  std::vector<std::string> argv;
  std::string executable;
  std::string python_version;
  std::string hidden_sitecustomize;
  std::string torch_version;
  std::vector<std::string> seen;
  std::vector<std::string> unseen;
  std::string what;
  std::string reason;
  std::string where;
  std::string error;
};

/// Parses one datagram; nothing when it is not a hook event (not JSON, no kind or pid, or a
/// pass_waits without its iterator, pass, begun, batches, wait_s or step_s).
std::optional<HookEvent> parse_hook_event(std::string_view datagram, double received_s);

/// "Traceback (most recent call last), HEADING:" and the frames, each with its code line, as
/// Python prints them; every line ends in '\n' and is indented by `indent`.
std::string format_traceback(const std::string& heading, const std::vector<StackFrame>& stack, int frames_omitted,
                             const std::string& indent);

}  // namespace dlreset::watch
