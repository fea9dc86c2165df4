// Each time a program stops a persistent iterator's workers or drops a loader's iterator, printed
// as it happens, from the hook's events while the program runs.
#pragma once

#include <fmt/format.h>
#include <sys/types.h>

#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "watch/analysis/python_view.h"
#include "watch/hook/hook_event.h"

namespace dlreset::watch {

/// Prints, as it happens, each time the program stops a persistent iterator's workers or drops
/// a loader's iterator: the traceback the first time a stack does it, one line after that.
class LiveResets {
 public:
  LiveResets(std::string program, double origin_s) : program_(std::move(program)), origin_s_(origin_s) {}

  void operator()(const HookEvent& event) {
    if (!event.settings.dataset.empty()) loaders_[{event.pid, event.loader}] = LoaderView::of(event);
    if (event.kind == HookEventKind::iterator_made) iterators_[{event.pid, event.iterator}] = event.loader;
    const bool stops =
        (event.kind == HookEventKind::workers_shutdown && event.settings.persistent && event.caller != "__del__") ||
        (event.kind == HookEventKind::iterator_dropped && !event.worker_pids.empty());
    if (!stops || !reported_.insert({event.pid, event.iterator}).second) return;
    PythonView view;  // just enough of one to name the loader
    const std::string key = event.loader.empty() ? iterators_[{event.pid, event.iterator}] : event.loader;
    if (const auto found = loaders_.find({event.pid, key}); found != loaders_.end())
      view.loaders.push_back(found->second);
    HookEvent named = event;
    named.loader = key;
    const std::string heading = reset_heading(view, named);
    for (auto& [stack, times] : stacks_) {
      if (!same_stack(stack, event.stack)) continue;
      ++times;
      std::cerr << fmt::format("{}: at {:.2f} s, {} again, from the same stack ({} times now)\n", program_,
                               event.time_s - origin_s_, heading, times);
      return;
    }
    stacks_.emplace_back(event.stack, 1);
    std::cerr << fmt::format("{}: at {:.2f} s:\n", program_, event.time_s - origin_s_)
              << format_traceback(heading, event.stack, event.frames_omitted, "");
  }

 private:
  std::string program_;
  double origin_s_;
  std::map<std::pair<pid_t, std::string>, LoaderView> loaders_;
  std::map<std::pair<pid_t, std::string>, std::string> iterators_;
  std::set<std::pair<pid_t, std::string>> reported_;
  std::vector<std::pair<std::vector<StackFrame>, int>> stacks_;
};

}  // namespace dlreset::watch
