#include "app/run_output.h"

#include <unistd.h>

#include <iostream>
#include <utility>

#include "harness/cli/json_file.h"

namespace dlreset::app {

RunOutput::RunOutput(const RunOptions& options, bool shows) : options_(options), shows_(shows) {}

FitHooks RunOutput::hooks(std::string workers) {
  FitHooks hooks;
  if (options_.profiler) hooks.profiler = &profiler_;
  if (shows_ && options_.progress && ::isatty(STDERR_FILENO)) hooks.callbacks.push_back(&progress_bar_);
  hooks.on_ready = [this, workers = std::move(workers)](const std::string& device) {
    if (!shows_ || json_to_stdout()) return;
    std::cout << "dlreset run: " << variants::to_string(options_.variant) << ", " << workers << " ("
              << data::to_string(options_.start_method) << ", "
              << (options_.persistent_workers ? "persistent" : "not persistent") << "), " << options_.epochs
              << " epochs on " << device << std::endl;
  };
  return hooks;
}

void RunOutput::report(const std::function<nlohmann::json()>& json, const std::function<nlohmann::json()>& events,
                       const std::function<std::string()>& summary) {
  if (!options_.json_path.empty()) cli::write_json(options_.json_path, json());
  if (!options_.events_path.empty()) cli::write_json(options_.events_path, events());
  if (!json_to_stdout()) {
    std::cout << summary();
    if (options_.profiler) std::cout << "\n" << profiler_.summary();
    std::cout.flush();
  }
}

bool RunOutput::json_to_stdout() const { return options_.json_path == "-" || options_.events_path == "-"; }

}  // namespace dlreset::app
