#include "app/run_command.h"

#include <cstdlib>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/distributed_run.h"
#include "app/fashion_fit.h"
#include "app/run_output.h"
#include "app/run_report.h"
#include "harness/cli/exit_status.h"
#include "harness/distributed/rendezvous.h"
#include "harness/workload/device.h"

namespace dlreset::app {

namespace {

/// The names --variant takes, from the enum's own list.
std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const variants::Variant variant : variants::all_variants()) {
    names.emplace_back(variants::to_string(variant));
  }
  return names;
}

/// What is fitted and how it is loaded: the variant and the DataLoader's settings.
void add_loader_options(CLI::App& run, cli::AcceptedValues& accepted, RunOptions& options, RunFlags& flags) {
  accepted.add_shown(run.add_option("--variant", flags.variant,
                                    "buggy (Lightning 1.5.0), fixed (1.5.1), "
                                    "workaround (1.5.0 with the reporter's patch) or vanilla (no Lightning)"),
                     cli::one_of(variant_names()));
  accepted.add_shown(run.add_option("--workers", options.workers,
                                    "DataLoader workers per loader (0: load in the main process)"),
                     cli::integer_in(0, 64));
  accepted.add_shown(run.add_option("--epochs", options.epochs, "Training epochs"), cli::integer_in(1, 100000));
  accepted.add_shown(run.add_option("--batch-size", options.batch_size, "Samples per batch"),
                     cli::integer_in(1, 60000));
  accepted.add_switch(run.add_flag("--no-persistent-workers", flags.no_persistent,
                                   "Give the loaders persistent_workers=False (a new set of workers every pass)"));
  accepted.add_switch(run.add_flag("--no-pin-memory", flags.no_pin, "Give the loaders pin_memory=False"));
  accepted.add_shown(run.add_option("--start-method", flags.method, "How workers start: thread, fork or spawn"),
                     cli::one_of(start_method_names()));
  accepted.add(run.add_option("--limit-train-batches", options.limit_train_batches,
                              "Training batches per epoch (default: all 938 at batch size 64)"),
               cli::integer_in(0, cli::kNoUpperBound));
  accepted.add(run.add_option("--limit-val-batches", options.limit_val_batches,
                              "Validation batches per epoch (default: all 157 at batch size 64)"),
               cli::integer_in(0, cli::kNoUpperBound));
  accepted.add_shown(run.add_option("--num-sanity-val-steps", options.num_sanity_val_steps,
                                    "Validation batches of the sanity check before training (-1: all)"),
                     cli::integer_in(-1, cli::kIntMax));
}

/// Where the data comes from and how the model trains on it.
void add_training_options(CLI::App& run, cli::AcceptedValues& accepted, RunOptions& options, RunFlags& flags) {
  // Whether the directory holds the files is the data set's to say (exit 1, naming the file).
  accepted.add_shown(run.add_option("--data", options.data_dir, "Directory of the Fashion-MNIST IDX files"),
                     cli::path_to("a directory holding the Fashion-MNIST IDX files"));
  accepted.add_shown(run.add_option("--device", options.device, "auto (CUDA when available), cpu or cuda"),
                     cli::one_of({"auto", "cpu", "cuda"}));
  accepted.add_shown(run.add_option("--optimizer", options.optimizer, "sgd (with momentum 0.9) or adam"),
                     cli::one_of({"sgd", "adam"}));
  accepted.add_shown(run.add_option("--lr", options.learning_rate, "Learning rate"), cli::positive_finite_number());
  accepted.add_shown(run.add_option("--intra-op-threads", options.intra_op_threads,
                                    "LibTorch intra-op threads on CPU (1 is fastest on a small machine)"),
                     cli::integer_in(1, 256));
  accepted.add_shown(run.add_option("--seed", options.seed, "Seeds the shuffle, the workers and the weights"),
                     cli::unsigned_integer());
  accepted.add_shown(run.add_option("--seed-mode", flags.seed_mode,
                                    "stable: every variant sees the same samples in the same order; torch: "
                                    "each new iterator draws from the loader's generator as real torch's does, "
                                    "so 1.5.0's order drifts from 1.5.1's from the second epoch on"),
                     cli::one_of({data::to_string(data::SeedMode::stable), data::to_string(data::SeedMode::torch)}));
}

/// What the run says beyond its summary: tracebacks, the profiler, the reports, the bar.
void add_output_options(CLI::App& run, cli::AcceptedValues& accepted, RunOptions& options, RunFlags& flags) {
  accepted.add_switch(
      run.add_flag("--trace-resets", options.trace_resets,
                   "Print a Python-style traceback to stderr every time a loader's iterator is set to null "
                   "(also: DLRESET_TRACE_RESETS=1)"));
  accepted.add_switch(run.add_flag("--profiler", options.profiler, "Print Lightning's SimpleProfiler report"));
  accepted.add(run.add_option("--json", options.json_path,
                              "Write the report as JSON to this file (-: stdout, and nothing else "
                              "goes there)"),
               cli::output_file(/*stdout_allowed=*/true));
  accepted.add(run.add_option("--events", options.events_path,
                              "Write the workers' lifecycle events (spawn, load, shutdown, exit) as "
                              "JSON"),
               cli::output_file(/*stdout_allowed=*/true));
  accepted.add_switch(run.add_flag("--no-progress", flags.no_progress, "No progress bar on stderr"));
}

/// A multi-rank job on this machine (distributed_run.h).
void add_job_options(CLI::App& run, cli::AcceptedValues& accepted, RunOptions& options) {
  accepted.add_shown(run.add_option("--ranks", options.ranks,
                                    "Ranks of a DDP-style job on this machine, started as torchrun starts them: "
                                    "this process is rank 0 and starts the others (RANK, WORLD_SIZE, "
                                    "MASTER_ADDR and MASTER_PORT in the environment join a job instead)"),
                     cli::integer_in(1, 256));
  accepted.add_shown(run.add_option("--master-addr", options.master_addr,
                                    "Address of rank 0's store and process group, with --ranks"),
                     cli::path_to("a host name or an IP address"));
  accepted.add_shown(run.add_option("--master-port", options.master_port,
                                    "Port of rank 0's store, with --ranks (0: any free port)"),
                     cli::integer_in(0, 65535));
  accepted.add_shown(run.add_option("--dist-timeout", options.dist_timeout_s,
                                    "Seconds a rank waits for the others to join, and for each collective"),
                     cli::finite_number_from(distributed::kMinTimeoutS));
}

}  // namespace

void RunFlags::apply(RunOptions& options) const {
  options.variant = *variants::parse_variant(variant);
  options.start_method = *data::parse_start_method(method);
  options.seed_mode = *data::parse_seed_mode(seed_mode);
  options.persistent_workers = !no_persistent;
  options.pin_memory = !no_pin;
  options.progress = !no_progress;
}

std::vector<std::string> start_method_names() {
  std::vector<std::string> names;
  for (const data::StartMethod method :
       {data::StartMethod::thread, data::StartMethod::fork, data::StartMethod::spawn}) {
    names.emplace_back(data::to_string(method));
  }
  return names;
}

void add_run_command(CLI::App& parent, RunCommandLine& run) {
  run.app =
      parent.add_subcommand("run", "Fit a CNN on Fashion-MNIST with one variant; report epoch times, worker spawns, "
                                   "iterator resets and dataset loads per loader");
  // In this order: --help, the man page and the bash completion list the options as added.
  add_loader_options(*run.app, run.accepted, run.options, run.flags);
  add_training_options(*run.app, run.accepted, run.options, run.flags);
  add_output_options(*run.app, run.accepted, run.options, run.flags);
  add_job_options(*run.app, run.accepted, run.options);
}

std::optional<int> finish_run_options(RunCommandLine& run, int argc, char** argv) {
  RunOptions& options = run.options;
  if (options.json_path == "-" && options.events_path == "-") {
    std::cerr << "dlreset: --json - and --events - would both write to stdout, as two JSON "
                 "documents in one stream; send one of them to a file.\n";
    return cli::kExitUsage;
  }
  run.flags.apply(options);
  if (options.persistent_workers && options.workers == 0) {
    // PyTorch refuses persistent_workers with 0 workers; the command line means "as
    // persistent as possible", so 0 workers simply run without.
    options.persistent_workers = false;
  }
  try {
    workload::resolve_device(options.device);
  } catch (const std::invalid_argument& error) {
    std::cerr << "dlreset: --device: " << error.what() << "\n";
    return cli::kExitUsage;
  }
  options.argv.assign(argv, argv + argc);
#if DLRESET_HAVE_DIST
  try {
    resolve_job(options, run.app->count("--ranks") > 0, [](const char* name) { return std::getenv(name); });
  } catch (const distributed::DistError& error) {
    std::cerr << "dlreset: " << error.what() << "\n";
    return cli::kExitUsage;
  }
#else
  if (options.ranks > 1 || std::getenv("WORLD_SIZE") != nullptr) {
    std::cerr << "dlreset: this dlreset was built without c10d's Gloo, so it runs no multi-rank job; "
                 "install libgloo-dev and build it again.\n";
    return cli::kExitUsage;
  }
#endif
  return std::nullopt;
}

int run_command(const RunOptions& options) {
#if DLRESET_HAVE_DIST
  if (options.rendezvous) return run_rank(options);
#endif
  if (options.trace_resets) trace::EventLog::global().set_trace_options(traceback_options(std::cerr));

  RunOutput output(options, /*shows=*/true);
  const FashionFit fit = fit_fashion_mnist(options, output.hooks(std::to_string(options.workers) + " workers"));

  const RunContext context{&options, fit.device, fit.parameter_digests};
  output.report([&] { return to_json(fit.report, context); }, [&] { return events_to_json(fit.report, context); },
                [&] { return "\n" + summary_table(fit.report, context); });
  return 0;
}

}  // namespace dlreset::app
