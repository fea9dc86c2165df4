// A GoogleTest helper: counts what one DataLoader does while a test watches it.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "harness/data/data_loader.h"
#include "harness/data/reset_observer.h"
#include "harness/trace/event_log.h"

namespace dlreset::testing {

/// Where a loader's life is, as the regression gate splits its resets: in use (a fit's
/// epochs, the sanity check, a hand-written loop) or at teardown, when a trainer lets go of
/// its workers on purpose.
enum class LoaderPhase { in_use, teardown };

/// What `NeverResetBefore(teardown)` names.
struct Teardown {};
inline constexpr Teardown teardown{};

/// One reset the watch saw.
struct WatchedReset {
  trace::Event event;  ///< With its stack, its epoch and the log's phase.
  LoaderPhase phase = LoaderPhase::in_use;
};

/// Attaches to one DataLoader for its own lifetime and counts what dlreset's regression gate
/// counts, from the moment it attached: worker spawns, dataset loads, iterators created,
/// iterator resets (in use and at teardown) and shutdown calls. Every reset keeps its stack,
/// so a failing matcher (harness/testing/loader_matchers.h) can show who did it.
///
/// It holds the loader, so counting stays valid after the loop under test has dropped it.
/// Create it, iterate and destroy it on one thread: the loader tells it of resets there.
class LoaderWatch : public data::ResetObserver {
 public:
  explicit LoaderWatch(std::shared_ptr<data::DataLoader> loader);
  ~LoaderWatch() override;
  LoaderWatch(const LoaderWatch&) = delete;
  LoaderWatch& operator=(const LoaderWatch&) = delete;

  /// Resets from now on are at teardown. Lightning's Trainer needs no call: its teardown runs
  /// in the event log's phase "teardown". A hand-written loop calls this before it nulls its
  /// loaders' iterators to stop their workers.
  void begin_teardown() { teardown_begun_ = true; }

  std::int64_t worker_spawns() const { return since_attached().worker_spawns; }
  std::int64_t dataset_loads() const { return since_attached().dataset_loads; }
  std::int64_t iterators_created() const { return since_attached().iterators_created; }
  std::int64_t shutdown_calls() const { return since_attached().shutdown_calls; }
  /// Resets seen in `phase`.
  std::int64_t resets(LoaderPhase phase) const;
  /// Every reset seen, in order.
  const std::vector<WatchedReset>& reset_log() const { return resets_; }
  /// The reset's Python-style traceback, innermost last: dlreset's frames and those of the
  /// program that links it, with system frames summarized.
  std::string traceback(const WatchedReset& reset) const;

  const std::string& loader_name() const { return loader_->name(); }
  int num_workers() const { return loader_->options().num_workers; }

  void on_iterator_reset(const trace::Event& reset) override;

 private:
  data::LoaderCounters since_attached() const;

  std::shared_ptr<data::DataLoader> loader_;
  /// The loader's counters when the watch attached: a loader iterated before is counted from
  /// here on.
  data::LoaderCounters at_attach_;
  bool teardown_begun_ = false;
  std::vector<WatchedReset> resets_;
};

/// One line, what GoogleTest prints as the value of a failed EXPECT_THAT.
void PrintTo(const LoaderWatch& watch, std::ostream* out);

}  // namespace dlreset::testing
