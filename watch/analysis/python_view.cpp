#include "watch/analysis/python_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace dlreset::watch {

namespace {

using IteratorId = std::pair<pid_t, std::string>;

bool is_library_file(const std::string& file) {
  return file.find("/torch/") != std::string::npos || file.find("/multiprocessing/") != std::string::npos ||
         file.find("/lib/python3") != std::string::npos;
}

/// -I, -E and -S among an interpreter's own options (before its script, -c or -m).
struct PythonFlags {
  bool isolated = false;
  bool ignore_environment = false;
  bool no_site = false;
};

PythonFlags python_flags(const std::vector<std::string>& argv) {
  PythonFlags flags;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-') break;  // the script, or "-" (stdin)
    if (arg == "--check-hash-based-pycs") {
      ++i;
      continue;
    }
    if (arg.compare(0, 2, "--") == 0) continue;
    bool stop = false;
    for (std::size_t c = 1; c < arg.size() && !stop; ++c) {
      switch (arg[c]) {
        case 'I': flags.isolated = true; break;
        case 'E': flags.ignore_environment = true; break;
        case 'S': flags.no_site = true; break;
        case 'c':
        case 'm': return flags;  // the program's own arguments follow
        case 'W':
        case 'X':
          if (c + 1 == arg.size()) ++i;  // its value is the next argument
          stop = true;
          break;
        default: break;
      }
    }
  }
  return flags;
}

}  // namespace

std::string LoaderView::dataset_class() const {
  const std::size_t dot = settings.dataset.rfind('.');
  return dot == std::string::npos ? settings.dataset : settings.dataset.substr(dot + 1);
}

std::string LoaderView::identity() const {
  const LoaderSettings& made = settings;
  std::string what = dataset_class();
  if (made.batch_size) what += fmt::format(", batch {}", *made.batch_size);
  if (made.workers) {
    what += fmt::format(", {} {}{}", *made.workers, made.start_method.empty() ? "" : made.start_method + " ",
                        *made.workers == 1 ? "worker" : "workers");
  }
  if (made.workers && *made.workers > 0) what += made.persistent ? ", persistent" : ", not persistent";
  return fmt::format("{} ({})", key, what);
}

std::string LoaderView::describe() const { return fmt::format("{} in pid {}", identity(), pid); }

LoaderView LoaderView::of(const HookEvent& event) {
  LoaderView loader;
  loader.pid = event.pid;
  loader.key = event.loader;
  loader.settings = event.settings;
  return loader;
}

std::string LoaderView::short_name() const { return fmt::format("{} of pid {}", key, pid); }

bool LoaderView::same_kind(const LoaderView& other) const {
  const LoaderSettings& a = settings;
  const LoaderSettings& b = other.settings;
  return pid == other.pid && a.dataset == b.dataset && a.batch_size == b.batch_size && a.workers == b.workers &&
         a.persistent == b.persistent;
}

const LoaderView* PythonView::loader_of_worker(pid_t worker) const {
  for (const LoaderView& view : loaders) {
    if (std::find(view.worker_pids.begin(), view.worker_pids.end(), worker) != view.worker_pids.end()) return &view;
  }
  return nullptr;
}

const LoaderView* PythonView::loader(pid_t pid, const std::string& key) const {
  for (const LoaderView& view : loaders) {
    if (view.pid == pid && view.key == key) return &view;
  }
  return nullptr;
}

bool is_reset(const HookEvent& event) {
  if (event.kind == HookEventKind::iterator_dropped) return !event.worker_pids.empty();
  return event.kind == HookEventKind::workers_shutdown && event.caller != "__del__" && event.caller != "_next_data";
}

bool same_stack(const std::vector<StackFrame>& a, const std::vector<StackFrame>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const StackFrame& x, const StackFrame& y) {
    return x.line == y.line && x.file == y.file && x.function == y.function;
  });
}

std::vector<StackGroup> group_by_stack(const PythonView& view, const std::vector<std::size_t>& events) {
  std::vector<StackGroup> groups;
  for (const std::size_t index : events) {
    const auto found = std::find_if(groups.begin(), groups.end(), [&](const StackGroup& group) {
      return same_stack(view.events[group.events.front()].stack, view.events[index].stack);
    });
    if (found == groups.end()) {
      groups.push_back(StackGroup{{index}});
    } else {
      found->events.push_back(index);
    }
  }
  return groups;
}

std::string program_frame(const std::vector<StackFrame>& stack) {
  if (stack.empty()) return "an unknown place";
  const auto own =
      std::find_if(stack.rbegin(), stack.rend(), [](const StackFrame& f) { return !is_library_file(f.file); });
  const StackFrame& frame = own != stack.rend() ? *own : stack.back();
  const std::size_t slash = frame.file.rfind('/');
  return fmt::format("{}:{} in {}", slash == std::string::npos ? frame.file : frame.file.substr(slash + 1), frame.line,
                     frame.function);
}

std::string why_no_hook(const PythonStart& start, const std::string& hook_dir) {
  const PythonFlags flags = python_flags(start.argv);
  if (flags.isolated) return "it was run with -I (isolated mode), which ignores PYTHONPATH and so the hook";
  if (flags.ignore_environment) return "it was run with -E, which ignores PYTHONPATH and so the hook";
  if (flags.no_site) return "it was run with -S, which skips the site module and so the hook's sitecustomize";
  if (!start.environ_read) return "its environment could not be read, so the reason is not known";
  if (!start.socket_set) {
    return "its environment has no DLRESET_WATCH_SOCKET: the program started it with an environment of its own";
  }
  if (!start.pythonpath || start.pythonpath->find(hook_dir) == std::string::npos) {
    return "its PYTHONPATH (" + start.pythonpath.value_or("unset") +
           ") no longer holds the hook's folder: the program replaced it";
  }
  return "its hook never said hello: it ended before the hook started, or its site module does not import "
         "sitecustomize";
}

namespace {

/// "in pid 812, rank 0" for one process; "in pids 812 (rank 0) and 813 (rank 1)" for several,
/// in the order of their ranks, then pids.
std::string where(const PythonView& view, const std::vector<std::size_t>& events) {
  std::vector<std::pair<std::optional<int>, pid_t>> places;
  places.reserve(events.size());
  for (const std::size_t index : events) places.emplace_back(view.events[index].rank, view.events[index].pid);
  std::sort(places.begin(), places.end());
  places.erase(std::unique(places.begin(), places.end()), places.end());
  const auto one = [](const std::pair<std::optional<int>, pid_t>& place, bool alone) {
    if (!place.first) return fmt::format("{}", place.second);
    return fmt::format(alone ? "{}, rank {}" : "{} (rank {})", place.second, *place.first);
  };
  if (places.size() == 1) return "in pid " + one(places.front(), true);
  std::string list;
  for (std::size_t i = 0; i < places.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == places.size() ? " and " : ", ") + one(places[i], false);
  }
  return "in pids " + list;
}

std::string heading(const PythonView& view, const HookEvent& event, const std::string& place) {
  const LoaderView* loader = view.loader(event.pid, event.loader);
  const std::string name = (loader != nullptr ? loader->identity() : std::string("an unknown loader")) + " " + place;
  if (event.kind == HookEventKind::iterator_dropped) {
    const std::string how = event.how == "None" ? "set to None" : event.how;
    return fmt::format("iterator of loader {} {}", name, how);
  }
  if (event.kind == HookEventKind::workers_shutdown) {
    return fmt::format("workers of loader {} shut down{}", name,
                       event.caller.empty() ? "" : " by " + event.caller + "()");
  }
  if (event.kind == HookEventKind::iterator_reset) return fmt::format("iterator of loader {} reset", name);
  if (event.kind == HookEventKind::iterator_made) return fmt::format("iterator of loader {} made", name);
  return fmt::format("sampler {} {}: set_epoch({})", event.sampler, place, event.epoch.value_or(-1));
}

}  // namespace

std::string reset_heading(const PythonView& view, const HookEvent& event) {
  const std::string rank = event.rank ? fmt::format(", rank {}", *event.rank) : "";
  return heading(view, event, fmt::format("in pid {}{}", event.pid, rank));
}

std::string reset_heading(const PythonView& view, const StackGroup& group) {
  return heading(view, view.events[group.events.front()], where(view, group.events));
}

void name_workers(std::vector<ProcessRecord>& records, const std::vector<HookEvent>& events) {
  std::map<pid_t, const HookEvent*> made_by;
  for (const HookEvent& event : events) {
    if (event.kind != HookEventKind::iterator_made) continue;
    for (const pid_t pid : event.worker_pids) made_by[pid] = &event;
  }
  for (ProcessRecord& record : records) {
    const auto found = made_by.find(record.pid);
    if (record.role != ProcessRole::worker || found == made_by.end() || found->second->time_s < record.start_s - 1.0) {
      continue;  // not a worker, or a pid used again
    }
    const HookEvent& event = *found->second;
    record.loader_key = fmt::format("{}:{}", event.pid, event.loader);
    record.iterator_key = fmt::format("{}:{}", event.pid, event.iterator);
    if (!event.settings.dataset.empty()) record.meant_to_last = event.settings.persistent;
  }
}

namespace {

/// The Python processes: every interpreter the tree ran, and whoever said hello; what each one's
/// hook said of itself, and the events it lost.
void find_processes(PythonView& view, const std::vector<ProcessRecord>& records, const std::string& hook_dir) {
  std::set<pid_t> listed;
  const auto hooked = [&](pid_t pid) -> HookedProcess& {
    for (HookedProcess& process : view.processes) {
      if (process.pid == pid) return process;
    }
    view.processes.push_back(HookedProcess{});
    view.processes.back().pid = pid;
    return view.processes.back();
  };
  for (const ProcessRecord& record : records) {
    if (!record.python) continue;
    hooked(record.pid).cmdline = record.cmdline;
    listed.insert(record.pid);
  }
  // A DataLoader worker says worker_ready itself. A fork worker is its training process's
  // worker, not a Python process of its own: it inherited the hook (and the rank) without a
  // hello, so it is left out here; a spawn worker ran its own interpreter and is listed above.
  std::set<pid_t> fork_workers;
  for (const HookEvent& event : view.events) {
    if (event.kind == HookEventKind::worker_ready && listed.count(event.pid) == 0) fork_workers.insert(event.pid);
  }
  // Events lost: the gaps in each process's numbering (those dropped, and those still waiting in
  // the hook when its process ended).
  std::map<pid_t, std::pair<long, long>> numbering;  // pid -> (highest number, events received)
  for (const HookEvent& event : view.events) {
    if (fork_workers.count(event.pid) != 0) continue;
    HookedProcess& process = hooked(event.pid);
    auto& [highest, received] = numbering[event.pid];
    highest = std::max(highest, event.sequence);
    ++received;
    process.events_lost = highest - received;
    if (event.rank) process.rank = event.rank;
    if (event.local_rank) process.local_rank = event.local_rank;
    switch (event.kind) {
      case HookEventKind::hello:
        process.hello = true;
        if (process.cmdline.empty()) {
          for (const std::string& arg : event.argv) process.cmdline += (process.cmdline.empty() ? "" : " ") + arg;
        }
        break;
      case HookEventKind::patched:
        process.patched = true;
        process.torch_version = event.torch_version;
        for (const std::string& where : event.unseen) process.unseen.push_back(where + ": not found in this torch");
        break;
      case HookEventKind::unseen: process.unseen.push_back(event.what + ": " + event.reason); break;
      case HookEventKind::hook_error: process.errors.push_back(event.where + ": " + event.error); break;
      default: break;
    }
  }
  // A fork worker inherits its parent's hook and says no hello of its own: only processes that
  // ran a Python interpreter by exec are expected to.
  for (HookedProcess& process : view.processes) {
    if (process.hello || view.hook != "on") continue;
    const auto record = std::find_if(records.begin(), records.end(),
                                     [&](const ProcessRecord& r) { return r.pid == process.pid && r.python; });
    if (record != records.end()) process.why_not = why_no_hook(*record->python, hook_dir);
  }
}

/// The loaders, their iterators and the passes of each, from the events in order.
void find_passes(PythonView& view) {
  std::map<IteratorId, std::string> loader_of_iterator;
  std::map<IteratorId, std::size_t> open_pass;  // iterator -> index into view.passes
  const auto loader_view = [&](const HookEvent& event) -> LoaderView* {
    if (event.loader.empty()) return nullptr;
    for (LoaderView& loader : view.loaders) {
      if (loader.pid == event.pid && loader.key == event.loader) return &loader;
    }
    if (event.settings.dataset.empty()) return nullptr;
    view.loaders.push_back(LoaderView::of(event));
    return &view.loaders.back();
  };
  const auto end_pass = [&](const IteratorId& id, std::size_t index) {
    const auto open = open_pass.find(id);
    if (open == open_pass.end()) return;
    PassView& pass = view.passes[open->second];
    pass.end_event = index;
    pass.yielded = view.events[index].yielded;
    pass.in_flight = view.events[index].in_flight;
    // What was made cannot exceed what was asked for; a hook that could not tell counts none.
    pass.ready = std::min(view.events[index].ready.value_or(0), pass.in_flight.value_or(0));
    open_pass.erase(open);
  };
  for (std::size_t i = 0; i < view.events.size(); ++i) {
    HookEvent& event = view.events[i];
    const IteratorId id{event.pid, event.iterator};
    if (event.loader.empty() && !event.iterator.empty()) {
      const auto known = loader_of_iterator.find(id);
      if (known != loader_of_iterator.end()) event.loader = known->second;
    }
    LoaderView* loader = loader_view(event);
    switch (event.kind) {
      case HookEventKind::loader_made:
        if (loader != nullptr) loader->made_s = event.time_s;
        break;
      case HookEventKind::iterator_made:
      case HookEventKind::iterator_reset:
        if (event.kind == HookEventKind::iterator_reset) {
          end_pass(id, i);
        } else if (loader != nullptr) {
          ++loader->iterators_made;
          loader->worker_pids.insert(loader->worker_pids.end(), event.worker_pids.begin(), event.worker_pids.end());
        }
        if (loader != nullptr) ++loader->passes;
        if (!event.iterator.empty()) {
          loader_of_iterator[id] = event.loader;
          open_pass[id] = view.passes.size();
          view.passes.push_back(PassView{event.pid, event.loader, event.iterator, i, std::nullopt, std::nullopt,
                                         std::nullopt, std::nullopt});
        }
        break;
      case HookEventKind::workers_shutdown:
        if (loader != nullptr) ++loader->shutdowns;
        end_pass(id, i);
        break;
      case HookEventKind::iterator_dropped:
        if (loader != nullptr && !event.worker_pids.empty()) ++loader->dropped;
        end_pass(id, i);
        break;
      default: break;
    }
  }
}

/// For each generation: the event of the iterator that started it, and the one that stopped it.
void find_generation_events(PythonView& view, const std::vector<ProcessRecord>& records,
                            const GenerationReport& generations) {
  // Each generation's iterator: the one whose workers are its members.
  view.generation_made.assign(generations.generations.size(), std::nullopt);
  view.generation_stopped.assign(generations.generations.size(), std::nullopt);
  for (std::size_t g = 0; g < generations.generations.size(); ++g) {
    std::set<pid_t> members;
    for (const std::size_t member : generations.generations[g].members) members.insert(records[member].pid);
    for (std::size_t i = 0; i < view.events.size() && !view.generation_made[g]; ++i) {
      const HookEvent& event = view.events[i];
      if (event.kind != HookEventKind::iterator_made) continue;
      for (const pid_t pid : event.worker_pids) {
        if (members.count(pid) != 0) view.generation_made[g] = i;
      }
    }
    if (!view.generation_made[g]) continue;
    const HookEvent& made = view.events[*view.generation_made[g]];
    // Who stopped them: a shutdown called by the program; else the drop of the iterator that
    // left its collection to shut them down; else the collection itself (__del__).
    std::optional<std::size_t> shutdown, dropped;
    for (std::size_t i = *view.generation_made[g] + 1; i < view.events.size(); ++i) {
      const HookEvent& event = view.events[i];
      if (event.pid != made.pid || event.iterator != made.iterator) continue;
      if (event.kind == HookEventKind::workers_shutdown && !shutdown) shutdown = i;
      if (event.kind == HookEventKind::iterator_dropped && !dropped) dropped = i;
    }
    if (shutdown && view.events[*shutdown].caller != "__del__") {
      view.generation_stopped[g] = shutdown;
    } else {
      view.generation_stopped[g] = dropped ? dropped : shutdown;
    }
  }
}

}  // namespace

PythonView analyse_python(std::string hook, std::vector<HookEvent> events, int malformed,
                          const std::vector<ProcessRecord>& records, const GenerationReport& generations,
                          const std::string& hook_dir) {
  PythonView view;
  view.hook = std::move(hook);
  view.malformed = malformed;
  // Each process's events in its own order; processes interleaved by their clocks (one clock).
  std::stable_sort(events.begin(), events.end(), [](const HookEvent& a, const HookEvent& b) {
    return a.pid == b.pid ? a.sequence < b.sequence : a.time_s < b.time_s;
  });
  view.events = std::move(events);

  find_processes(view, records, hook_dir);
  find_passes(view);
  find_generation_events(view, records, generations);
  return view;
}

}  // namespace dlreset::watch
