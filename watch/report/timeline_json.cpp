#include "watch/report/timeline_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "watch/analysis/input_wait.h"

namespace dlreset::watch {

namespace {}  // namespace

nlohmann::json events_json(const WatchReport& report) {
  const WatchResult& result = report.result;
  const PythonView& python = report.python;
  // One group of lanes per loader where the hook named it, else per parent; a lone parent's is
  // plainly "workers".
  std::map<pid_t, int> parents;
  for (const Generation& generation : report.generations.generations) parents[generation.parent] = 0;
  const auto lane_of = [&](const ProcessRecord& worker) {
    if (const LoaderView* loader = python.loader_of_worker(worker.pid)) {
      return fmt::format("{} {} (pid {})", loader->key, loader->dataset_class(), loader->pid);
    }
    return parents.size() == 1 ? std::string("workers") : fmt::format("workers of pid {}", worker.parent);
  };
  struct Timed {
    double t;
    nlohmann::json event;
  };
  std::vector<Timed> timed;
  int widest = 0;
  std::map<std::string, int> start_methods;
  for (const Generation& generation : report.generations.generations) {
    widest = std::max(widest, static_cast<int>(generation.members.size()));
    ++start_methods[to_string(generation.start)];
    for (const std::size_t member : generation.members) {
      const ProcessRecord& worker = result.processes[member];
      // The pid names the worker: unlike a slot number it never stands for two lives at once,
      // so the plot pairs every spawn with its own exit.
      nlohmann::json common = {
          {"loader", lane_of(worker)}, {"worker", worker.pid}, {"pid", worker.pid}, {"generation", generation.index}};
      nlohmann::json spawn = common;
      spawn["kind"] = "spawn";
      spawn["t"] = since_watch_began(report, worker.start_s);
      spawn["epoch"] = epoch_of_start(report, worker.start_s);
      timed.push_back({worker.start_s, spawn});
      if (worker.end_s) {
        nlohmann::json exit = common;
        exit["kind"] = "exit";
        exit["t"] = since_watch_began(report, *worker.end_s);
        exit["epoch"] = epoch_at(report, *worker.end_s);
        timed.push_back({*worker.end_s, exit});
      }
    }
  }
  // Where the program stopped a generation's workers (the hook's stack says who): drawn as the
  // iterator resets of dlreset run's timelines are.
  for (std::size_t g = 0; g < python.generation_stopped.size(); ++g) {
    const std::optional<std::size_t> stopped = python.generation_stopped[g];
    if (!stopped || !is_reset(python.events[*stopped])) continue;
    const HookEvent& event = python.events[*stopped];
    const ProcessRecord& first = result.processes[report.generations.generations[g].members.front()];
    timed.push_back({event.time_s,
                     {{"kind", "iterator_reset"},
                      {"t", since_watch_began(report, event.time_s)},
                      {"loader", lane_of(first)},
                      {"phase", "fit"},
                      {"epoch", epoch_at(report, event.time_s)},
                      {"where", program_frame(event.stack)}}});
  }
  // The loop's waits for data, under its training process: each first batch's wait as its exact
  // interval, and each pass's later waits as one band with their share of the pass.
  for (const PassWait& pass : report.findings.input_wait.passes) {
    const PassWaits& waits = python.events[pass.event].waits;
    if (!pass.first_batch_s) continue;
    const double returned = waits.begun_s + *pass.first_batch_s;
    const nlohmann::json common = {{"kind", "input_wait"},  {"pid", pass.pid},
                                   {"loader", pass.loader}, {"iterator", pass.iterator},
                                   {"pass", pass.number},   {"cause", to_string(pass.cause)}};
    nlohmann::json first = common;
    first["phase"] = "first_batch";
    first["start"] = since_watch_began(report, returned - pass.first_wait_s);
    first["t"] = since_watch_began(report, returned);
    timed.push_back({returned - pass.first_wait_s, first});
    if (waits.last_batch_s && *waits.last_batch_s > returned) {
      nlohmann::json steady = common;
      steady["phase"] = "steady";
      steady["start"] = since_watch_began(report, returned);
      steady["t"] = since_watch_began(report, *waits.last_batch_s);
      const double busy = pass.steady_wait_s + pass.step_s;
      steady["fraction"] = busy > 0.0 ? pass.steady_wait_s / busy : 0.0;
      timed.push_back({returned, steady});
    }
  }
  std::stable_sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) { return a.t < b.t; });
  nlohmann::json events = nlohmann::json::array();
  for (Timed& entry : timed) events.push_back(std::move(entry.event));
  nlohmann::json epochs = nlohmann::json::array();
  for (std::size_t e = 0; e < result.epoch_marks_s.size(); ++e) {
    const double end = e + 1 < result.epoch_marks_s.size() ? result.epoch_marks_s[e + 1] : result.end_s;
    epochs.push_back({{"epoch", e},
                      {"start", since_watch_began(report, result.epoch_marks_s[e])},
                      {"end", since_watch_began(report, end)}});
  }
  std::string start_method;
  for (const auto& [name, count] : start_methods) start_method += (start_method.empty() ? "" : "+") + name;
  return {{"schema", "dlreset.events"},
          {"schema_version", 2},
          {"variant", "watched"},
          {"command", what_ran(report)},
          {"workers", widest},
          {"start_method", start_method.empty() ? "none" : start_method},
          {"total_s", result.end_s - result.origin_s},
          {"epochs", epochs},
          {"events", events}};
}

}  // namespace dlreset::watch
