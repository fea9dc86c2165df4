// The report's "memory" object (docs/watch.md, "JSON"): how memory was sampled, each worker's
// and training process's first, largest and last sample, the most the workers held together,
// and the workers that copied what they read.
#pragma once

#include <nlohmann/json.hpp>

#include "watch/analysis/watch_report.h"

namespace dlreset::watch {

nlohmann::json memory_json(const WatchReport& report);

}  // namespace dlreset::watch
