// The lines `dlreset watch` prints while the program runs: the attach line, then each respawn
// and each reset as it is found, before the summary at the end.
#pragma once

#include <sys/types.h>

#include <optional>
#include <vector>

#include "watch/cli/live_resets.h"
#include "watch/cli/live_respawns.h"
#include "watch/cli/watch_options.h"
#include "watch/tree/watcher.h"

namespace dlreset::watch {

/// The lines printed while the watch runs: the attach line, then each respawn and reset as it
/// is found (unless --no-live).
class LiveLines {
 public:
  explicit LiveLines(const WatchCommandOptions& options) : options_(options) {}

  /// Sets the watcher's callbacks to this; it must outlive the watch.
  void attach(WatchOptions& watch_options);

 private:
  void ready(pid_t root, WatchMode mode, double origin_s);
  /// A hang, as it is seen.
  void hung(const HangRecord& hang) const;

  const WatchCommandOptions& options_;
  double origin_s_ = 0.0;               ///< The time the watch counts from.
  std::vector<ProcessRecord> records_;  ///< The tree as last sampled: a hang's processes are named by it.
  std::optional<LiveRespawns> respawns_;
  std::optional<LiveResets> resets_;
  std::vector<HookEvent> iterators_made_;  ///< The iterators made so far name the workers.
};

}  // namespace dlreset::watch
