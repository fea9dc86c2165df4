#include <unistd.h>

#include <iostream>
#include <string>

#include "app/distributed_run.h"
#include "app/fashion_fit.h"
#include "app/json_file.h"
#include "app/progress_bar.h"
#include "app/run_options.h"
#include "app/run_report.h"
#include "harness/profiler/simple_profiler.h"

namespace dlreset::app {

int run_command(const RunOptions& options) {
#if DLRESET_HAVE_DIST
  if (options.rendezvous) return run_rank(options);
#endif
  if (options.trace_resets) trace::EventLog::global().set_trace_options(traceback_options(std::cerr));
  const bool json_to_stdout = options.json_path == "-" || options.events_path == "-";

  profiler::SimpleProfiler simple_profiler;
  ProgressBar progress_bar;
  FitHooks hooks;
  if (options.profiler) hooks.profiler = &simple_profiler;
  if (options.progress && ::isatty(STDERR_FILENO)) hooks.callbacks.push_back(&progress_bar);
  hooks.on_ready = [&](const std::string& device) {
    if (json_to_stdout) return;
    std::cout << "dlreset run: " << variants::to_string(options.variant) << ", " << options.workers
              << " workers (" << data::to_string(options.start_method) << ", "
              << (options.persistent_workers ? "persistent" : "not persistent") << "), "
              << options.epochs << " epochs on " << device << std::endl;
  };
  const FashionFit fit = fit_fashion_mnist(options, hooks);

  const RunContext context{&options, fit.device, fit.parameter_digests};
  if (!options.json_path.empty()) write_json(options.json_path, to_json(fit.report, context));
  if (!options.events_path.empty()) write_json(options.events_path, events_to_json(fit.report, context));
  if (!json_to_stdout) {
    std::cout << "\n" << summary_table(fit.report, context);
    if (options.profiler) std::cout << "\n" << simple_profiler.summary();
    std::cout.flush();
  }
  return 0;
}

}  // namespace dlreset::app
