// The LoaderWatch matchers: one count each, explained with the expected and seen counts.
#include "harness/testing/loader_matchers.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace dlreset::testing {

namespace {

/// What one matcher counts and how it says so.
struct CountSpec {
  std::string description;  ///< "spawned each of its workers once": what a passing loader did.
  std::string counted;      ///< "worker spawns": the unit of the count.
  std::function<std::int64_t(const LoaderWatch&)> seen;
  std::function<std::int64_t(const LoaderWatch&)> expected;
  /// Why the expected count is what it is, when it comes from the loader: "2 workers, once each".
  std::function<std::string(const LoaderWatch&)> because;
  /// For reset counts: the phase whose resets are shown on failure.
  std::optional<LoaderPhase> resets_in;
};

class CountMatcher : public ::testing::MatcherInterface<const LoaderWatch&> {
 public:
  explicit CountMatcher(CountSpec spec) : spec_(std::move(spec)) {}

  bool MatchAndExplain(const LoaderWatch& watch, ::testing::MatchResultListener* listener) const override {
    const std::int64_t seen = spec_.seen(watch);
    const std::int64_t expected = spec_.expected(watch);
    if (seen == expected) {
      *listener << "saw " << seen << " " << spec_.counted;
      return true;
    }
    *listener << "expected " << expected << " " << spec_.counted;
    if (spec_.because) *listener << " (" << spec_.because(watch) << ")";
    *listener << ", seen " << seen;
    if (spec_.resets_in && listener->IsInterested()) explain_resets(watch, seen, listener);
    return false;
  }

  void DescribeTo(std::ostream* out) const override { *out << spec_.description; }
  void DescribeNegationTo(std::ostream* out) const override { *out << "not: " << spec_.description; }

 private:
  /// The regression gate's answer to "why": the traceback of each reset in the phase counted.
  void explain_resets(const LoaderWatch& watch, std::int64_t seen, ::testing::MatchResultListener* listener) const {
    std::int64_t index = 0;
    for (const WatchedReset& reset : watch.reset_log()) {
      if (reset.phase != *spec_.resets_in) continue;
      *listener << "\nThis traceback is why (reset " << ++index << " of " << seen << "):\n" << watch.traceback(reset);
    }
  }

  CountSpec spec_;
};

LoaderMatcher count_matcher(CountSpec spec) { return ::testing::MakeMatcher(new CountMatcher(std::move(spec))); }

std::function<std::int64_t(const LoaderWatch&)> exactly(std::int64_t times) {
  return [times](const LoaderWatch&) { return times; };
}

std::string times_text(std::int64_t times) { return times == 1 ? "once" : std::to_string(times) + " times"; }

/// One of the watch's counters against a number: "<did> once", "<did> 3 times".
LoaderMatcher times_matcher(const std::string& did, const char* counted, std::int64_t (LoaderWatch::*counter)() const,
                            std::int64_t times) {
  return count_matcher({did + " " + times_text(times), counted,
                        [counter](const LoaderWatch& watch) { return (watch.*counter)(); }, exactly(times), nullptr,
                        std::nullopt});
}

LoaderMatcher resets_matcher(std::string description, LoaderPhase phase, std::int64_t times) {
  const char* when = phase == LoaderPhase::teardown ? "at teardown" : "before teardown";
  return count_matcher({std::move(description), std::string("iterator resets ") + when,
                        [phase](const LoaderWatch& watch) { return watch.resets(phase); }, exactly(times), nullptr,
                        phase});
}

}  // namespace

LoaderMatcher SpawnedWorkersOnce() {
  return count_matcher({"spawned each of its workers once", "worker spawns",
                        [](const LoaderWatch& watch) { return watch.worker_spawns(); },
                        [](const LoaderWatch& watch) { return std::int64_t{watch.num_workers()}; },
                        [](const LoaderWatch& watch) {
                          return std::to_string(watch.num_workers()) + " workers, once each";
                        },
                        std::nullopt});
}

LoaderMatcher SpawnedWorkersTimes(std::int64_t times) {
  return times_matcher("spawned workers", "worker spawns", &LoaderWatch::worker_spawns, times);
}

LoaderMatcher LoadedDatasetTimes(std::int64_t times) {
  return times_matcher("loaded its dataset", "dataset loads", &LoaderWatch::dataset_loads, times);
}

LoaderMatcher CreatedIteratorsTimes(std::int64_t times) {
  return times_matcher("created an iterator", "iterators created", &LoaderWatch::iterators_created, times);
}

LoaderMatcher CalledShutdownTimes(std::int64_t times) {
  return times_matcher("called shutdown_workers", "shutdown calls", &LoaderWatch::shutdown_calls, times);
}

LoaderMatcher NeverResetBefore(Teardown) {
  return resets_matcher("never reset its iterator before teardown", LoaderPhase::in_use, 0);
}

LoaderMatcher ResetBeforeTeardownTimes(std::int64_t times) {
  return resets_matcher("reset its iterator " + times_text(times) + " before teardown", LoaderPhase::in_use, times);
}

LoaderMatcher ResetAtTeardownTimes(std::int64_t times) {
  return resets_matcher("reset its iterator " + times_text(times) + " at teardown", LoaderPhase::teardown, times);
}

}  // namespace dlreset::testing
