#include "watch/analysis/generations.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>

namespace dlreset::watch {

GenerationReport find_generations(const std::vector<ProcessRecord>& records, const GenerationOptions& options) {
  GenerationReport report;
  std::vector<std::size_t> workers;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (records[i].role == ProcessRole::worker) workers.push_back(i);
  }
  std::stable_sort(workers.begin(), workers.end(),
                   [&](std::size_t a, std::size_t b) { return records[a].start_s < records[b].start_s; });
  report.workers = static_cast<int>(workers.size());

  // (parent, iterator) -> index into report.generations; the iterator is empty where not named.
  std::map<std::pair<pid_t, std::string>, std::size_t> newest;
  for (const std::size_t i : workers) {
    const ProcessRecord& worker = records[i];
    const std::pair<pid_t, std::string> group{worker.parent, worker.iterator_key};
    bool joined = false;
    if (const auto found = newest.find(group); found != newest.end()) {
      Generation& current = report.generations[found->second];
      double first_end = std::numeric_limits<double>::infinity();
      for (const std::size_t member : current.members) {
        if (records[member].end_s) first_end = std::min(first_end, *records[member].end_s);
      }
      if (worker.start_s - current.start_s <= options.window_s &&
          worker.start_s < first_end - options.start_uncertainty_s && current.start == worker.start) {
        current.members.push_back(i);
        joined = true;
      }
    }
    if (!joined) {
      Generation generation;
      generation.parent = worker.parent;
      generation.loader_key = worker.loader_key;
      generation.start = worker.start;
      generation.start_s = worker.start_s;
      generation.members.push_back(i);
      report.generations.push_back(generation);
      newest[group] = report.generations.size() - 1;
    }
  }

  for (std::size_t g = 0; g < report.generations.size(); ++g) {
    Generation& generation = report.generations[g];
    generation.index = static_cast<int>(g) + 1;
    bool all_ended = true;
    double end = 0.0;
    for (const std::size_t member : generation.members) {
      generation.cpu_s += records[member].cpu_s;
      if (records[member].end_s) {
        end = std::max(end, *records[member].end_s);
      } else {
        all_ended = false;
      }
    }
    if (all_ended) generation.end_s = end;
  }

  // Every worker that ended is charged to the first later generation of its parent that began
  // after it ended (within the start uncertainty): that generation replaced it.
  for (const std::size_t i : workers) {
    const ProcessRecord& worker = records[i];
    if (!worker.end_s || !worker.meant_to_last.value_or(true)) continue;
    for (Generation& generation : report.generations) {
      if (generation.parent != worker.parent || generation.start_s <= worker.start_s) continue;
      if (generation.loader_key != worker.loader_key) continue;  // another loader's set takes over
      if (generation.start_s + options.start_uncertainty_s >= *worker.end_s) {
        ++generation.replaced;
        break;
      }
    }
  }
  for (const Generation& generation : report.generations) {
    if (generation.replaced == 0) continue;
    report.respawns.push_back(Respawn{generation.index, generation.start_s, generation.replaced,
                                      static_cast<int>(generation.members.size())});
  }
  return report;
}

}  // namespace dlreset::watch
