// LoaderWatch: counts one DataLoader's events from the moment it attached.
#include "harness/testing/loader_watch.h"

#include <utility>

#include "harness/trace/reset_trace.h"

namespace dlreset::testing {

LoaderWatch::LoaderWatch(std::shared_ptr<data::DataLoader> loader)
    : loader_(std::move(loader)), at_attach_(loader_->counters()) {
  loader_->add_reset_observer(this);
}

LoaderWatch::~LoaderWatch() { loader_->remove_reset_observer(this); }

data::LoaderCounters LoaderWatch::since_attached() const {
  data::LoaderCounters now = loader_->counters();
  now.worker_spawns -= at_attach_.worker_spawns;
  now.shutdown_calls -= at_attach_.shutdown_calls;
  now.iterator_resets -= at_attach_.iterator_resets;
  now.dataset_loads -= at_attach_.dataset_loads;
  now.iterators_created -= at_attach_.iterators_created;
  return now;
}

std::int64_t LoaderWatch::resets(LoaderPhase phase) const {
  std::int64_t count = 0;
  for (const WatchedReset& reset : resets_) count += reset.phase == phase ? 1 : 0;
  return count;
}

void LoaderWatch::on_iterator_reset(const trace::Event& reset) {
  const bool at_teardown = teardown_begun_ || reset.phase == "teardown";
  resets_.push_back({reset, at_teardown ? LoaderPhase::teardown : LoaderPhase::in_use});
}

std::string LoaderWatch::traceback(const WatchedReset& reset) const {
  if (!reset.event.stack) return "(no stack was captured)\n";
  trace::TracebackOptions format =
      trace::reset_traceback_options(reset.event, trace::EventLog::global().trace_options());
  format.show_program_frames = true;
  return trace::format_traceback(reset.event.stack->frames(), format);
}

void PrintTo(const LoaderWatch& watch, std::ostream* out) {
  *out << "the watch of loader '" << watch.loader_name() << "' (" << watch.num_workers()
       << " workers): " << watch.worker_spawns() << " worker spawns, " << watch.dataset_loads() << " dataset loads, "
       << watch.iterators_created() << " iterators created, " << watch.resets(LoaderPhase::in_use)
       << " iterator resets in use and " << watch.resets(LoaderPhase::teardown) << " at teardown, "
       << watch.shutdown_calls() << " shutdown calls";
}

}  // namespace dlreset::testing
