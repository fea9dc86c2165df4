#include <unistd.h>

#include <fstream>
#include <iostream>

#include "harness/app/progress_bar.h"
#include "harness/app/run_options.h"
#include "harness/app/run_report.h"
#include "harness/data/data_loader.h"
#include "harness/data/idx_dataset.h"
#include "harness/profiler/simple_profiler.h"
#include "harness/trace/event_log.h"
#include "harness/variants/fit_report.h"
#include "harness/workload/fashion_mnist_module.h"

namespace dlreset::app {

namespace {

data::DataLoaderOptions loader_options(const RunOptions& options, const std::string& name, bool shuffle) {
  data::DataLoaderOptions loader;
  loader.name = name;
  loader.batch_size = options.batch_size;
  loader.shuffle = shuffle;
  loader.num_workers = options.workers;
  loader.persistent_workers = options.persistent_workers && options.workers > 0;
  loader.pin_memory = options.pin_memory;
  loader.start_method = options.start_method;
  loader.seed = options.seed;
  return loader;
}

void write_json(const std::string& path, const nlohmann::json& json) {
  if (path == "-") {
    std::cout << json.dump(2) << "\n";
    return;
  }
  std::ofstream out(path);
  if (!out) throw std::runtime_error("Cannot write the JSON report to '" + path + "'.");
  out << json.dump(2) << "\n";
}

}  // namespace

int run_command(const RunOptions& options) {
  trace::EventLog& log = trace::EventLog::global();
  if (options.trace_resets) log.set_trace_options({true, &std::cerr, nullptr});

  workload::WorkloadOptions workload;
  workload.device = options.device;
  workload.optimizer = options.optimizer;
  workload.learning_rate = options.learning_rate;
  workload.intra_op_threads = options.intra_op_threads;
  workload.seed = options.seed;
  workload::FashionMnistModule model(workload);

  // Lightning gives val loaders the train loader's worker settings in the report's setup.
  auto train = std::make_shared<data::DataLoader>(
      std::shared_ptr<data::Dataset>(data::make_fashion_mnist(options.data_dir, "train")),
      loader_options(options, "train", /*shuffle=*/true));
  auto val = std::make_shared<data::DataLoader>(
      std::shared_ptr<data::Dataset>(data::make_fashion_mnist(options.data_dir, "t10k")),
      loader_options(options, "val", /*shuffle=*/false));

  loops::TrainerOptions trainer;
  trainer.max_epochs = options.epochs;
  trainer.limit_train_batches = options.limit_train_batches;
  trainer.limit_val_batches = options.limit_val_batches;
  trainer.num_sanity_val_steps = options.num_sanity_val_steps;
  profiler::SimpleProfiler simple_profiler;
  if (options.profiler) trainer.profiler = &simple_profiler;
  ProgressBar progress_bar;
  if (options.progress && ::isatty(STDERR_FILENO)) trainer.callbacks.push_back(&progress_bar);

  const bool json_to_stdout = options.json_path == "-";
  if (!json_to_stdout) {
    std::cout << "dlreset run: " << variants::to_string(options.variant) << ", "
              << options.workers << " workers (" << data::to_string(options.start_method) << ", "
              << (options.persistent_workers ? "persistent" : "not persistent") << "), "
              << options.epochs << " epochs on " << model.device_name() << std::endl;
  }
  const variants::FitReport report = variants::run_fit(options.variant, model, train, val, trainer);

  RunContext context{&options, model.device_name()};
  if (!options.json_path.empty()) write_json(options.json_path, to_json(report, context));
  if (!options.events_path.empty()) {
    write_json(options.events_path, events_to_json(report, context));
  }
  if (!json_to_stdout) {
    std::cout << "\n" << summary_table(report, context);
    if (options.profiler) std::cout << "\n" << simple_profiler.summary();
    std::cout.flush();
  }
  return 0;
}

}  // namespace dlreset::app
