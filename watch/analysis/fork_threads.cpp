#include "watch/analysis/fork_threads.h"

#include <fmt/format.h>

#include <algorithm>

#include "watch/analysis/wording.h"

namespace dlreset::watch {

std::vector<ForkBesideThreads> forks_beside_threads(const PythonView& python) {
  std::vector<ForkBesideThreads> found;
  for (const HookEvent& event : python.events) {
    if (event.kind != HookEventKind::iterator_made || event.worker_pids.empty() || event.threads.empty()) continue;
    if (event.settings.start_method != "fork") continue;
    auto same = std::find_if(found.begin(), found.end(), [&](const ForkBesideThreads& each) {
      return each.pid == event.pid && each.loader == event.loader;
    });
    if (same == found.end()) {
      ForkBesideThreads fork;
      fork.pid = event.pid;
      fork.loader = event.loader;
      same = found.insert(found.end(), fork);
    }
    ++same->iterators;
    same->workers += static_cast<long>(event.worker_pids.size());
    if (event.threads.size() > same->threads.size()) same->threads = event.threads;
  }
  for (ForkBesideThreads& fork : found) {
    const LoaderView* loader = python.loader(fork.pid, fork.loader);
    std::string names;
    for (const std::string& name : fork.threads) names += "'" + name + "', ";
    names.resize(names.size() - 2);
    fork.sentence = fmt::format(
        "{} of {} {} forked from a process with {} threads ({} and the one that made the iterator); a lock held by "
        "one of them at fork time deadlocks the worker: use spawn or forkserver",
        plural(fork.workers, "worker", "workers"),
        loader != nullptr ? loader->short_name() : fmt::format("pid {}", fork.pid), fork.workers == 1 ? "was" : "were",
        fork.threads.size() + 1, names);
  }
  return found;
}

}  // namespace dlreset::watch
