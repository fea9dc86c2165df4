#include "watch/analysis/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>

#include "watch/analysis/wording.h"

namespace dlreset::watch {

namespace {

/// How an event ended an iterator's pass, as the findings say it.
const char* ended_how(const HookEvent& ended) {
  if (ended.kind == HookEventKind::iterator_reset) return "reset by another iter()";
  if (ended.kind == HookEventKind::workers_shutdown) {
    return ended.caller == "__del__" ? "collected (its workers shut down by __del__)" : "shut down";
  }
  return "dropped";
}

bool alive_at(const ProcessRecord& record, double time_s) {
  return record.start_s <= time_s && (!record.end_s || *record.end_s > time_s);
}

std::string owner_of(const PythonView& python, const ProcessRecord& worker) {
  if (const LoaderView* loader = python.loader_of_worker(worker.pid)) return loader->short_name();
  return fmt::format("workers of pid {}", worker.parent);
}

void find_respawn_causes(Findings& findings, const GenerationReport& generations, const PythonView& python) {
  findings.respawns.count = static_cast<long>(generations.respawns.size());
  for (const Respawn& respawn : generations.respawns) {
    // The generation it replaced: the newest earlier one of the same parent.
    const Generation& now = generations.generations[static_cast<std::size_t>(respawn.generation - 1)];
    std::optional<std::size_t> stopped;
    for (std::size_t g = 0; g + 1 < static_cast<std::size_t>(respawn.generation); ++g) {
      if (generations.generations[g].parent == now.parent && g < python.generation_stopped.size() &&
          python.generation_stopped[g]) {
        stopped = python.generation_stopped[g];
      }
    }
    if (!stopped) {
      ++findings.respawns_without_cause;
      continue;
    }
    const auto same =
        std::find_if(findings.respawn_causes.begin(), findings.respawn_causes.end(), [&](const Findings::Cause& cause) {
          return same_stack(python.events[cause.stopped.events.front()].stack, python.events[*stopped].stack);
        });
    if (same == findings.respawn_causes.end()) {
      findings.respawn_causes.push_back(Findings::Cause{StackGroup{{*stopped}}, {respawn.generation}});
    } else {
      same->stopped.events.push_back(*stopped);
      same->respawns.push_back(respawn.generation);
    }
    findings.respawns.events.push_back(*stopped);
  }
}

void find_peak(Findings& findings, const WatchResult& result, const PythonView& python) {
  std::vector<std::pair<double, int>> changes;
  for (const ProcessRecord& record : result.processes) {
    if (record.role != ProcessRole::worker) continue;
    changes.emplace_back(record.start_s, +1);
    if (record.end_s) changes.emplace_back(*record.end_s, -1);
  }
  // Ends before starts at the same instant: a worker replaced at once is not two alive.
  std::sort(changes.begin(), changes.end());
  int live = 0;
  for (const auto& [time_s, change] : changes) {
    live += change;
    if (live > findings.peak.workers) {
      findings.peak.workers = live;
      findings.peak.time_s = time_s;
    }
  }
  findings.live_workers.count = findings.peak.workers;
  if (findings.peak.workers == 0) return;
  std::map<std::string, int> owners;
  std::vector<std::string> order;
  for (const ProcessRecord& record : result.processes) {
    if (record.role != ProcessRole::worker || !alive_at(record, findings.peak.time_s)) continue;
    const std::string owner = owner_of(python, record);
    if (owners[owner]++ == 0) order.push_back(owner);
  }
  for (const std::string& owner : order) findings.peak.by_owner.emplace_back(owner, owners[owner]);
  // A loader without persistent workers whose workers of two iterators are alive together.
  std::map<const LoaderView*, std::set<std::string>> passes;
  for (const ProcessRecord& record : result.processes) {
    if (record.role != ProcessRole::worker || !alive_at(record, findings.peak.time_s)) continue;
    const LoaderView* loader = python.loader_of_worker(record.pid);
    if (loader != nullptr && !loader->settings.persistent) passes[loader].insert(record.iterator_key);
  }
  for (const LoaderView& loader : python.loaders) {
    if (passes.count(&loader) != 0 && passes[&loader].size() > 1) findings.peak.overlapping.push_back(loader.key);
  }
}

void find_leaks(Findings& findings, const WatchResult& result, const PythonView& python) {
  std::set<pid_t> leaked;
  const auto record_of = [&](pid_t pid) -> const ProcessRecord* {
    for (const ProcessRecord& record : result.processes) {
      if (record.pid == pid && record.role == ProcessRole::worker) return &record;
    }
    return nullptr;
  };
  // A loader made again while one of the same kind, made and used before it, still has workers:
  // the old one leaked them. (Loaders of one kind made together, as a list of validation loaders
  // is, leak nothing by living together.)
  for (std::size_t i = 0; i < python.events.size(); ++i) {
    const HookEvent& made = python.events[i];
    if (made.kind != HookEventKind::iterator_made || made.worker_pids.empty()) continue;
    const LoaderView* now = python.loader(made.pid, made.loader);
    if (now == nullptr) continue;
    for (const LoaderView& old : python.loaders) {
      if (old.key == now->key || !old.same_kind(*now) || !now->made_s) continue;
      const auto old_first_pass = std::find_if(python.passes.begin(), python.passes.end(), [&](const PassView& pass) {
        return pass.pid == old.pid && pass.loader == old.key;
      });
      if (old_first_pass == python.passes.end() || python.events[old_first_pass->begin_event].time_s > *now->made_s) {
        continue;
      }
      int alive = 0;
      for (const pid_t pid : old.worker_pids) {
        const ProcessRecord* worker = record_of(pid);
        if (worker == nullptr || !alive_at(*worker, made.time_s) || leaked.count(pid) != 0) continue;
        leaked.insert(pid);
        ++alive;
      }
      if (alive == 0) continue;
      findings.leaked_workers.details.push_back(fmt::format(
          "{} started its workers at {:.2f} s while {}, a loader of the same kind, still had {} alive: they were "
          "left running",
          now->describe(), made.time_s - result.origin_s, old.key, alive));
      findings.leaked_workers.events.push_back(i);
    }
  }
  // Workers that outlived the program.
  const ProcessRecord& root = result.processes.front();
  if (root.end_s && !result.attached) {
    int outlived = 0;
    for (const ProcessRecord& record : result.processes) {
      if (record.role != ProcessRole::worker || (record.end_s && *record.end_s <= *root.end_s)) continue;
      leaked.insert(record.pid);
      ++outlived;
    }
    if (outlived > 0) {
      findings.leaked_workers.details.push_back(fmt::format("{} {} the program", outlived,
                                                            outlived == 1 ? "worker outlived" : "workers outlived"));
    }
  }
  // A count of settled workers that grows at every epoch line: workers alive at the line and
  // still alive halfway through its epoch. A set being replaced at the line is still alive then
  // and ends within moments; only what stays counts.
  const std::vector<double>& marks = result.epoch_marks_s;
  for (std::size_t k = 0; k < marks.size(); ++k) {
    const double end = k + 1 < marks.size() ? marks[k + 1] : std::max(result.end_s, marks[k]);
    const double halfway = marks[k] + (end - marks[k]) / 2;
    findings.live_at_epochs.push_back(static_cast<int>(std::count_if(result.processes.begin(), result.processes.end(),
                                                                     [&](const ProcessRecord& record) {
                                                                       return record.role == ProcessRole::worker &&
                                                                              alive_at(record, marks[k]) &&
                                                                              alive_at(record, halfway);
                                                                     })));
  }
  const std::vector<int>& live = findings.live_at_epochs;
  const bool grows =
      live.size() >= 3 && std::adjacent_find(live.begin(), live.end(), std::greater_equal<>()) == live.end();
  if (grows) {
    std::string counts;
    for (const int count : live) counts += (counts.empty() ? "" : " → ") + std::to_string(count);
    findings.leaked_workers.details.push_back("the workers that stay alive through each epoch grew: " + counts);
  }
  findings.leaked_workers.count = static_cast<long>(leaked.size());
  if (leaked.empty() && grows) findings.leaked_workers.count = live.back() - live.front();
}

void find_extra_iterators(Findings& findings, const WatchResult& result, const PythonView& python) {
  for (const PassView& pass : python.passes) {
    if (pass.yielded.value_or(-1) != 0 || pass.in_flight.value_or(0) <= 0 || !pass.end_event) continue;
    const HookEvent& began = python.events[pass.begin_event];
    const HookEvent& ended = python.events[*pass.end_event];
    const LoaderView* loader = python.loader(pass.pid, pass.loader);
    const long ready = pass.ready.value_or(0);
    ++findings.extra_iterators.count;
    findings.batches_thrown_away += ready;
    findings.batches_in_flight += *pass.in_flight;
    findings.extra_iterators.details.push_back(fmt::format(
        "iterator {} of {} began a pass at {:.2f} s ({}) and handed out no batch before it was {} at {:.2f} s ({}): "
        "{}",
        pass.iterator, loader != nullptr ? loader->describe() : fmt::format("a loader of pid {}", pass.pid),
        began.time_s - result.origin_s, program_frame(began.stack), ended_how(ended), ended.time_s - result.origin_s,
        program_frame(ended.stack), thrown_away_words(ready, *pass.in_flight)));
    findings.extra_iterators.events.push_back(pass.begin_event);
    findings.extra_iterators_ended.push_back(*pass.end_event);
  }
}

void find_late_set_epoch(Findings& findings, const WatchResult& result, const PythonView& python) {
  for (std::size_t i = 0; i < python.events.size(); ++i) {
    const HookEvent& event = python.events[i];
    if (event.kind != HookEventKind::set_epoch || event.pending_iterator.empty() || !event.epoch ||
        event.pending_epoch == event.epoch) {
      continue;
    }
    ++findings.late_set_epoch.count;
    findings.late_set_epoch.details.push_back(fmt::format(
        "set_epoch({}) on sampler {} of pid {} at {:.2f} s ({}) came after iterator {} had drawn its pass's order "
        "with epoch {} and before it handed out a batch: that pass replays epoch {}'s order",
        *event.epoch, event.sampler, event.pid, event.time_s - result.origin_s, program_frame(event.stack),
        event.pending_iterator, event.pending_epoch.value_or(-1), event.pending_epoch.value_or(-1)));
    findings.late_set_epoch.events.push_back(i);
  }
}

}  // namespace

std::string overlap_cause(const LivePeak& peak) {
  if (peak.overlapping.empty()) return "";
  std::string loaders;
  for (std::size_t i = 0; i < peak.overlapping.size(); ++i) {
    loaders += (i == 0 ? "" : i + 1 == peak.overlapping.size() ? " and of " : ", of ") + peak.overlapping[i];
  }
  return fmt::format("the next pass of {} (not persistent) started its workers before the last pass's workers had "
                     "ended",
                     loaders);
}

Findings analyse_findings(const WatchResult& result, const GenerationReport& generations, const PythonView& python) {
  Findings findings;
  find_respawn_causes(findings, generations, python);
  find_peak(findings, result, python);
  find_leaks(findings, result, python);
  // Without the hook the Python checks see nothing, which is all there is to see where no Python
  // process ran.
  const bool hook = python.hook == "on";
  findings.extra_iterators.seen = hook || python.processes.empty();
  findings.late_set_epoch.seen = findings.extra_iterators.seen;
  if (hook) {
    find_extra_iterators(findings, result, python);
    find_late_set_epoch(findings, result, python);
  }
  return findings;
}

}  // namespace dlreset::watch
