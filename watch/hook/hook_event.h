// One report of the Python hook (watch/hook/python/sitecustomize.py) from a process of the watched
// tree: what the program did to a DataLoader's iterator or a sampler's epoch, and the Python stack
// that did it. docs/watch.md ("The Python hook") lists the fields of each kind.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  unknown,           ///< A kind this watcher does not know (a newer hook).
};

const char* to_string(HookEventKind kind);

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

  // hello, patched, unseen, hook_error.
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

/// Parses one datagram; nothing when it is not a hook event (not JSON, no kind or pid).
std::optional<HookEvent> parse_hook_event(std::string_view datagram, double received_s);

/// "Traceback (most recent call last), HEADING:" and the frames, each with its code line, as
/// Python prints them; every line ends in '\n' and is indented by `indent`.
std::string format_traceback(const std::string& heading, const std::vector<StackFrame>& stack, int frames_omitted,
                             const std::string& indent);

}  // namespace dlreset::watch
