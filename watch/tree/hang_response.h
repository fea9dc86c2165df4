// What the watch does about a hang (--hang-timeout, --on-hang): reads the stacks of every live
// process of the tree, records them, and, where it is to stop the program, ends the whole tree:
// SIGTERM to every member, then SIGKILL to those still there a grace period later.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "watch/hook/hook_event.h"
#include "watch/tree/hang_watch.h"
#include "watch/tree/process_tree.h"

namespace dlreset::watch {

struct HangResponseOptions {
  double timeout_s = 0.0;
  bool stop = true;
  std::string stacks_file;  ///< Where the hooks write their stacks; empty: the hook is off.
  int signal = 0;           ///< The signal that makes a hook write them.
  std::function<void(const HangRecord& hang)> on_hang;
};

class HangResponse {
 public:
  explicit HangResponse(HangResponseOptions options);

  /// The hook's setting for DLRESET_WATCH_HANG: "BEAT_S,SIGNAL,PATH".
  std::string hook_setting() const;

  void on_hook_event(const HookEvent& event);

  /// At a sample tick: looks for a hang, and answers one; while stopping, kills what is left
  /// once the grace period is over. Appends each hang to `hangs`.
  void tick(double now_s, const ProcessTree& tree, pid_t root, std::vector<HangRecord>& hangs);
  /// When the watch began to end the program; empty: it did not.
  std::optional<double> stop_s() const { return stop_s_; }
  /// At the end of the watch: where it ended the program, no member is left behind.
  void finish(const ProcessTree& tree);

 private:
  HangRecord answer(const HangSign& sign, const ProcessTree& tree);

  HangResponseOptions options_;
  HangWatch watch_;
  std::set<pid_t> hooked_;   ///< Processes whose hook spoke: their faulthandler is armed,
  std::set<pid_t> unarmed_;  ///< but for these, whose hook said it could not arm it.
  std::optional<double> stop_s_;
  bool killed_ = false;
};

}  // namespace dlreset::watch
