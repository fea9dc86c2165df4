// A watch's report in words: the summary printed at its end, its verdict on respawns and the
// sentences of the other findings.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "watch/analysis/watch_report.h"

namespace dlreset::watch {

/// The verdict on respawns in one sentence, e.g. "2 workers were replaced 9 times, every 3.1 s:
/// the loop is not keeping persistent workers."; the findings beyond respawns follow it in the
/// summary (finding_verdicts).
std::string verdict(const WatchReport& report);

/// The summary printed at the end of a watch (several lines, each ending in '\n').
std::string summary_text(const WatchReport& report);

/// Under a generation's line: its loader, and where its iterator was made and stopped.
std::string generation_cause(const WatchReport& report, std::size_t generation);

/// The hook's state, the Python processes (and why any did not load the hook), the loaders,
/// and the peak of live workers.
std::string python_summary(const WatchReport& report);

/// Each check's lines (CheckSpec::section), then each check's tracebacks, in the table's order;
/// a check that found nothing says nothing.
std::string findings_summary(const WatchReport& report);

/// The sentences after the respawn verdict, one a check whose count is above 0
/// (CheckSpec::verdict): empty when there are none.
std::vector<std::string> finding_verdicts(const WatchReport& report);

}  // namespace dlreset::watch
