// A watch's workers as a timeline (`--events`): the format of `dlreset run --events`, so that
// plots/plot_timeline.py draws a watched program as it draws a dlreset run.
#pragma once

#include <nlohmann/json.hpp>

#include "watch/analysis/watch_report.h"

namespace dlreset::watch {

/// Each worker's spawn and exit, and a reset mark where the program stopped a generation; each
/// loader's workers (each parent's, where the hook did not name the loader) form one group of
/// lanes.
nlohmann::json events_json(const WatchReport& report);

}  // namespace dlreset::watch
