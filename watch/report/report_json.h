// A watch's report as JSON (`--json`): schema "dlreset.watch", version 2 (docs/watch.md, "JSON").
#pragma once

#include <nlohmann/json.hpp>

#include "watch/analysis/watch_report.h"

namespace dlreset::watch {

/// The whole report: the processes, generations, respawns, checks, the hook's events with their
/// stacks, and the summary's sentences.
nlohmann::json report_json(const WatchReport& report);

}  // namespace dlreset::watch
