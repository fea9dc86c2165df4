// How `dlreset run` reports a fit: a table for people, JSON for plots and scripts.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/run_options.h"
#include "harness/cli/json_file.h"  // write_json, for every JSON output of the command
#include "variants/fit_report.h"

namespace dlreset::app {

/// Everything the run produced beyond the FitReport.
struct RunContext {
  const RunOptions* options = nullptr;
  std::string device;
  /// FashionFit::parameter_digests: the weights after each epoch.
  std::vector<std::uint64_t> parameter_digests;
};

/// The JSON report (see docs/run-json.md for every field).
nlohmann::json to_json(const variants::FitReport& report, const RunContext& context);
/// The run's settings, its epochs' start and end, and every event of the fit (worker spawn,
/// started, dataset_loaded, shutdown, exit; iterator resets), with times in seconds since the
/// fit started: what plots/plot_timeline.py draws (see docs/run-json.md).
nlohmann::json events_to_json(const variants::FitReport& report, const RunContext& context);
/// The summary table printed at the end of a run.
std::string summary_table(const variants::FitReport& report, const RunContext& context);

}  // namespace dlreset::app
