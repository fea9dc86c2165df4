// The parts of a watch's report that the Python hook and the checks beyond respawns add: in
// words for the summary, and as JSON.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "watch/watch_report.h"

namespace dlreset::watch {

/// Under a generation's line: its loader, and where its iterator was made and stopped.
std::string generation_cause(const WatchReport& report, std::size_t generation);

/// The hook's state, the Python processes (and why any did not load the hook), the loaders,
/// and the peak of live workers.
std::string python_summary(const WatchReport& report);

/// Each check with a finding: the respawns grouped by the stack that caused them (with its
/// traceback), leaked workers, extra iterators, late set_epoch.
std::string findings_summary(const WatchReport& report);

/// The sentences after the respawn verdict, one a finding: empty when there are none.
std::vector<std::string> finding_verdicts(const WatchReport& report);

/// `python` in the --json report: the hook, its processes, the loaders and every event with its
/// stack.
nlohmann::json python_json(const WatchReport& report);

/// `checks` in the --json report: each check's count and details.
nlohmann::json checks_json(const WatchReport& report);

}  // namespace dlreset::watch
