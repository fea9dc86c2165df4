#include "watch/tree/hang_watch.h"

#include <algorithm>

namespace dlreset::watch {

namespace {

/// The CPU time /proc counts in clock ticks of 10 ms: less than one is no use.
constexpr double kCpuTickS = 0.005;

}  // namespace

const char* to_string(HangRule rule) { return rule == HangRule::batches ? "batches" : "cpu"; }

double HangWatch::beat_s() const { return std::clamp(timeout_s_ / 4.0, 0.05, 5.0); }

void HangWatch::on_hook_event(const HookEvent& event) {
  switch (event.kind) {
    case HookEventKind::patched: batch_rule_ = true; break;
    case HookEventKind::pass_begun:
    case HookEventKind::pass_beat: {
      LivePass& pass = passes_[{event.pid, {event.iterator, event.waits.pass}}];
      pass.progress_s = std::max(pass.progress_s, event.time_s);
      pass.batches = std::max(pass.batches, event.waits.batches);
      pass.reported = false;
      break;
    }
    case HookEventKind::pass_waits: passes_.erase({event.pid, {event.iterator, event.waits.pass}}); break;
    default: break;
  }
}

void HangWatch::on_exit(pid_t pid) {
  for (auto it = passes_.begin(); it != passes_.end();) {
    it = it->first.first == pid ? passes_.erase(it) : std::next(it);
  }
}

std::optional<HangSign> HangWatch::look(double now_s, double tree_cpu_s, std::uint64_t changes, pid_t root) {
  if (cpu_s_ < 0 || tree_cpu_s - cpu_s_ >= kCpuTickS || changes != changes_) {
    cpu_reported_ = false;
    cpu_s_ = tree_cpu_s;
    changes_ = changes;
    cpu_progress_s_ = now_s;
  }
  if (batch_rule_) {
    // A beat can come up to beat_s() after the batch it follows: quiet for timeout + beat, the
    // pass handed out nothing for the timeout at least.
    const PassKey* stalest = nullptr;
    double oldest_s = now_s;
    for (const auto& [key, pass] : passes_) {
      if (!pass.reported && pass.progress_s < oldest_s) {
        oldest_s = pass.progress_s;
        stalest = &key;
      }
    }
    if (stalest == nullptr || now_s - oldest_s <= timeout_s_ + beat_s()) return std::nullopt;
    LivePass& pass = passes_.at(*stalest);
    pass.reported = true;
    return HangSign{now_s,          now_s - oldest_s,      HangRule::batches,
                    stalest->first, stalest->second.first, stalest->second.second,
                    pass.batches};
  }
  if (cpu_reported_ || now_s - cpu_progress_s_ <= timeout_s_) return std::nullopt;
  cpu_reported_ = true;
  HangSign sign;
  sign.time_s = now_s;
  sign.quiet_s = now_s - cpu_progress_s_;
  sign.rule = HangRule::cpu;
  sign.pid = root;
  return sign;
}

}  // namespace dlreset::watch
