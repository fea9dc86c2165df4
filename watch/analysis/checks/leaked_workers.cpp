// The leaked-workers check: workers left running by a loader made again, workers that outlived
// the program, and a count of settled workers that grows from epoch to epoch.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "watch/analysis/checks/checks.h"
#include "watch/analysis/wording.h"

namespace dlreset::watch {

namespace {

/// --max-leaked-workers's --help.
constexpr const char* kHelp =
    "Fail if more workers than this were leaked: left running by a loader made again, outliving the "
    "program, or piling up from epoch to epoch";

/// Workers left running by a loader made again: each added to `leaked`.
void find_left_running(const CheckInput& input, Check& check, std::set<pid_t>& leaked) {
  const WatchResult& result = input.result;
  const PythonView& python = input.python;
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
      check.details.push_back(fmt::format(
          "{} started its workers at {:.2f} s while {}, a loader of the same kind, still had {} alive: they were "
          "left running",
          now->describe(), made.time_s - result.origin_s, old.key, alive));
      check.events.push_back(i);
    }
  }
}

/// Workers that outlived the program: each added to `leaked`. Not where the watch itself ended a
/// hung program (--on-hang stop): it signals every process at once, and the program may end first.
void find_outlived(const WatchResult& result, Check& check, std::set<pid_t>& leaked) {
  const ProcessRecord& root = result.processes.front();
  if (!root.end_s || result.attached || result.hang_stop_s) return;
  int outlived = 0;
  for (const ProcessRecord& record : result.processes) {
    if (record.role != ProcessRole::worker || (record.end_s && *record.end_s <= *root.end_s)) continue;
    leaked.insert(record.pid);
    ++outlived;
  }
  if (outlived > 0) {
    check.details.push_back(fmt::format("{} {} the program", outlived,
                                        outlived == 1 ? "worker outlived" : "workers outlived"));
  }
}

/// The workers alive at each epoch line (into `findings`); whether their count grew at every one.
bool find_growth(const WatchResult& result, Check& check, Findings& findings) {
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
    check.details.push_back("the workers that stay alive through each epoch grew: " + counts);
  }
  return grows;
}

void find(const CheckInput& input, Check& check, Findings& findings) {
  std::set<pid_t> leaked;
  find_left_running(input, check, leaked);
  find_outlived(input.result, check, leaked);
  const bool grows = find_growth(input.result, check, findings);
  const std::vector<int>& live = findings.live_at_epochs;
  check.count = static_cast<long>(leaked.size());
  if (leaked.empty() && grows) check.count = live.back() - live.front();
}

std::string section(const WatchReport& /*report*/, const Check& check) {
  return details_section(check, "leaked worker", "leaked workers");
}

std::string verdict(const WatchReport& /*report*/, const Check& check) {
  return fmt::format("{} leaked: {}.", plural(check.count, "worker was", "workers were"), check.details.front());
}

std::string gate_words(const WatchReport& /*report*/, const Check& check) {
  return plural(check.count, "worker was", "workers were") + " leaked";
}

}  // namespace

CheckSpec leaked_workers_check() {
  return {{"leaked_workers", "--max-leaked-workers", kHelp, "leaked worker"},
          {find, section, nullptr, verdict, gate_words}};
}

}  // namespace dlreset::watch
