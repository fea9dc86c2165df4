#include "watch/tree/hang_response.h"

#include <signal.h>

#include <fmt/format.h>

#include <optional>
#include <utility>
#include <vector>

namespace dlreset::watch {

namespace {

/// How long the members of a hung program have, after SIGTERM, before SIGKILL.
constexpr double kGraceS = 2.0;

}  // namespace

HangResponse::HangResponse(HangResponseOptions options) : options_(std::move(options)), watch_(options_.timeout_s) {}

std::string HangResponse::hook_setting() const {
  return fmt::format("{},{},{}", watch_.beat_s(), options_.signal, options_.stacks_file);
}

void HangResponse::on_hook_event(const HookEvent& event) {
  hooked_.insert(event.pid);
  // A hook that could not arm faulthandler: its signal would do what the default does, end the
  // process, so it is never sent there, nor to a fork of it.
  if (event.kind == HookEventKind::unseen && event.what == "stacks") unarmed_.insert(event.pid);
  watch_.on_hook_event(event);
}

void HangResponse::tick(double now_s, const ProcessTree& tree, pid_t root, std::vector<HangRecord>& hangs) {
  if (stop_s_) {
    if (!killed_ && now_s - *stop_s_ >= kGraceS) finish(tree);
    return;
  }
  std::vector<pid_t> ended;
  for (const pid_t pid : hooked_) {
    if (!tree.is_live_member(pid)) ended.push_back(pid);
  }
  for (const pid_t pid : ended) {
    hooked_.erase(pid);
    unarmed_.erase(pid);
    watch_.on_exit(pid);
  }
  const std::optional<HangSign> sign = watch_.look(now_s, tree.cpu_total_s(), tree.changes(), root);
  if (!sign) return;
  hangs.push_back(answer(*sign, tree));
  if (options_.on_hang) options_.on_hang(hangs.back());
  if (!options_.stop) return;
  hangs.back().stopped = true;
  stop_s_ = now_s;
  for (const pid_t pid : tree.live_members()) ::kill(pid, SIGTERM);
}

void HangResponse::finish(const ProcessTree& tree) {
  if (!stop_s_ || killed_) return;
  killed_ = true;
  for (const pid_t pid : tree.live_members()) ::kill(pid, SIGKILL);
}

HangRecord HangResponse::answer(const HangSign& sign, const ProcessTree& tree) {
  StackRequest request;
  request.stacks_file = options_.stacks_file;
  request.signal = options_.signal;
  for (const pid_t pid : tree.live_members()) {
    // A fork of a process with the hook, that ran no exec, has its parent's faulthandler.
    bool python = hooked_.count(pid) != 0 && unarmed_.count(pid) == 0;
    const ProcessRecord* record = tree.record_of(pid);
    if (hooked_.count(pid) == 0 && record != nullptr && !record->exec_seen) {
      python = hooked_.count(record->parent) != 0 && unarmed_.count(record->parent) == 0;
    }
    (python && !options_.stacks_file.empty() ? request.python : request.native).push_back(pid);
  }
  HangRecord hang;
  hang.sign = sign;
  hang.stacks = collect_stacks(request);
  return hang;
}

}  // namespace dlreset::watch
