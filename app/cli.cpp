#include "app/cli.h"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/version.h>

#include "app/accepted_values.h"
#include "app/bash_completion.h"
#include "app/demo_command.h"
#include "app/distributed_run.h"
#include "app/man_page.h"
#include "app/run_options.h"
#include "app/signal_guard.h"
#include "app/watch_command.h"
#include "harness/distributed/rendezvous.h"
#include "harness/data/core/errors.h"
#include "harness/data/core/interrupt.h"
#include "harness/workload/device.h"

namespace dlreset::app {

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

/// The names the --variant and --start-method checks take, from the enums' own lists.
std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const variants::Variant variant : variants::all_variants()) {
    names.emplace_back(variants::to_string(variant));
  }
  return names;
}

std::vector<std::string> start_method_names() {
  std::vector<std::string> names;
  for (const data::StartMethod method :
       {data::StartMethod::thread, data::StartMethod::fork, data::StartMethod::spawn}) {
    names.emplace_back(data::to_string(method));
  }
  return names;
}

/// The flags of `run` that the parser fills as text or as a negated switch, and that fold into
/// RunOptions once parsed (RunFlags::apply).
struct RunFlags {
  std::string variant = variants::to_string(RunOptions{}.variant);
  std::string method = data::to_string(RunOptions{}.start_method);
  std::string seed_mode = data::to_string(RunOptions{}.seed_mode);
  bool no_persistent = false;
  bool no_pin = false;
  bool no_progress = false;

  void apply(RunOptions& options) const {
    options.variant = *variants::parse_variant(variant);
    options.start_method = *data::parse_start_method(method);
    options.seed_mode = *data::parse_seed_mode(seed_mode);
    options.persistent_workers = !no_persistent;
    options.pin_memory = !no_pin;
    options.progress = !no_progress;
  }
};

void add_run_options(CLI::App& run, AcceptedValues& accepted, RunOptions& options, RunFlags& flags) {
  accepted.add(run.add_option("--variant", flags.variant, "buggy (Lightning 1.5.0), fixed (1.5.1), "
                              "workaround (1.5.0 with the reporter's patch) or vanilla (no Lightning)"),
               one_of(variant_names()))
      ->capture_default_str();
  accepted.add(run.add_option("--workers", options.workers,
                              "DataLoader workers per loader (0: load in the main process)"),
               integer_in(0, 64))
      ->capture_default_str();
  accepted.add(run.add_option("--epochs", options.epochs, "Training epochs"), integer_in(1, 100000))
      ->capture_default_str();
  accepted.add(run.add_option("--batch-size", options.batch_size, "Samples per batch"),
               integer_in(1, 60000))
      ->capture_default_str();
  accepted.add_switch(run.add_flag("--no-persistent-workers", flags.no_persistent,
      "Give the loaders persistent_workers=False (a new set of workers every pass)"));
  accepted.add_switch(run.add_flag("--no-pin-memory", flags.no_pin, "Give the loaders pin_memory=False"));
  accepted.add(run.add_option("--start-method", flags.method, "How workers start: thread, fork or spawn"),
               one_of(start_method_names()))
      ->capture_default_str();
  accepted.add(run.add_option("--limit-train-batches", options.limit_train_batches,
                              "Training batches per epoch (default: all 938 at batch size 64)"),
               integer_in(0, kNoUpperBound));
  accepted.add(run.add_option("--limit-val-batches", options.limit_val_batches,
                              "Validation batches per epoch (default: all 157 at batch size 64)"),
               integer_in(0, kNoUpperBound));
  accepted.add(run.add_option("--num-sanity-val-steps", options.num_sanity_val_steps,
                              "Validation batches of the sanity check before training (-1: all)"),
               integer_in(-1, kIntMax))
      ->capture_default_str();
  // Whether the directory holds the files is the data set's to say (exit 1, naming the file).
  accepted.add(run.add_option("--data", options.data_dir, "Directory of the Fashion-MNIST IDX files"),
               path_to("a directory holding the Fashion-MNIST IDX files"))
      ->capture_default_str();
  accepted.add(run.add_option("--device", options.device, "auto (CUDA when available), cpu or cuda"),
               one_of({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  accepted.add(run.add_option("--optimizer", options.optimizer, "sgd (with momentum 0.9) or adam"),
               one_of({"sgd", "adam"}))
      ->capture_default_str();
  accepted.add(run.add_option("--lr", options.learning_rate, "Learning rate"),
               positive_finite_number())
      ->capture_default_str();
  accepted.add(run.add_option("--intra-op-threads", options.intra_op_threads,
                              "LibTorch intra-op threads on CPU (1 is fastest on a small machine)"),
               integer_in(1, 256))
      ->capture_default_str();
  accepted.add(run.add_option("--seed", options.seed, "Seeds the shuffle, the workers and the weights"),
               unsigned_integer())
      ->capture_default_str();
  accepted.add(run.add_option("--seed-mode", flags.seed_mode,
                              "stable: every variant sees the same samples in the same order; torch: "
                              "each new iterator draws from the loader's generator as real torch's does, "
                              "so 1.5.0's order drifts from 1.5.1's from the second epoch on"),
               one_of({data::to_string(data::SeedMode::stable), data::to_string(data::SeedMode::torch)}))
      ->capture_default_str();
  accepted.add_switch(run.add_flag("--trace-resets", options.trace_resets,
      "Print a Python-style traceback to stderr every time a loader's iterator is set to null "
      "(also: DLRESET_TRACE_RESETS=1)"));
  accepted.add_switch(
      run.add_flag("--profiler", options.profiler, "Print Lightning's SimpleProfiler report"));
  accepted.add(run.add_option("--json", options.json_path,
                              "Write the report as JSON to this file (-: stdout, and nothing else "
                              "goes there)"),
               output_file(/*stdout_allowed=*/true));
  accepted.add(run.add_option("--events", options.events_path,
                              "Write the workers' lifecycle events (spawn, load, shutdown, exit) as "
                              "JSON"),
               output_file(/*stdout_allowed=*/true));
  accepted.add_switch(run.add_flag("--no-progress", flags.no_progress, "No progress bar on stderr"));
  accepted.add(run.add_option("--ranks", options.ranks,
                              "Ranks of a DDP-style job on this machine, started as torchrun starts them: "
                              "this process is rank 0 and starts the others (RANK, WORLD_SIZE, "
                              "MASTER_ADDR and MASTER_PORT in the environment join a job instead)"),
               integer_in(1, 256))
      ->capture_default_str();
  accepted.add(run.add_option("--master-addr", options.master_addr,
                              "Address of rank 0's store and process group, with --ranks"),
               path_to("a host name or an IP address"))
      ->capture_default_str();
  accepted.add(run.add_option("--master-port", options.master_port,
                              "Port of rank 0's store, with --ranks (0: any free port)"),
               integer_in(0, 65535))
      ->capture_default_str();
  accepted.add(run.add_option("--dist-timeout", options.dist_timeout_s,
                              "Seconds a rank waits for the others to join, and for each collective"),
               finite_number_from(dist::kMinTimeoutS))
      ->capture_default_str();
}

void add_demo_options(CLI::App& demo, AcceptedValues& accepted, DemoOptions& options,
                      std::string& color, std::string& method) {
  accepted.add_switch(demo.add_flag("--interactive", options.interactive, "Wait for Enter between steps"));
  accepted.add(demo.add_option("--step", options.step, "Run only this step"), integer_in(1, kDemoSteps));
  accepted.add(demo.add_option("--color", color,
                               "Colour the output: auto (on a terminal), always or never"),
               one_of({"auto", "always", "never"}))
      ->capture_default_str();
  accepted.add(demo.add_option("--workers", options.workers, "DataLoader workers per loader in the runs"),
               integer_in(0, 64))
      ->capture_default_str();
  accepted.add(demo.add_option("--start-method", method, "How workers start: thread, fork or spawn"),
               one_of(start_method_names()))
      ->capture_default_str();
  // Two epochs at least: the bug shows from the second one on.
  accepted.add(demo.add_option("--epochs", options.epochs, "Epochs per run"), integer_in(2, 1000))
      ->capture_default_str();
  accepted.add(demo.add_option("--limit-train-batches", options.limit_train_batches,
                               "Training batches per epoch"),
               integer_in(1, kNoUpperBound))
      ->capture_default_str();
  accepted.add(demo.add_option("--limit-val-batches", options.limit_val_batches,
                               "Validation batches per epoch"),
               integer_in(1, kNoUpperBound))
      ->capture_default_str();
  accepted.add(demo.add_option("--data", options.data_dir, "Directory of the Fashion-MNIST IDX files"),
               path_to("a directory holding the Fashion-MNIST IDX files"))
      ->capture_default_str();
}

/// A signal that came after the last batch (or during the demo's wait for Enter) still ends the
/// command as interrupted.
int status_after_signals(int status) {
  if (const int signal_number = data::interrupt_requested()) {
    std::cerr << "dlreset: interrupted by signal " << signal_number << " (" << strsignal(signal_number)
              << ") after the last batch.\n";
    return exit_status_for_signal(signal_number);
  }
  return status;
}

/// The closing sections of dlreset(1).
std::string dlreset_man_page_sections() {
  return ".SH EXIT STATUS\n"
         "0 on success; 1 when a run fails (a missing or corrupt data set, a worker error); 2 for a "
         "bad flag or value; 128 + N when signal N (SIGINT: 130, SIGTERM: 143) stopped a run after "
         "its DataLoader workers were shut down. dlreset watch: see dlreset\\-watch(1).\n"
         ".SH ENVIRONMENT\n.TP\n.B DLRESET_TRACE_RESETS=1\n"
         "Print a Python\\-style traceback to stderr every time a loader's iterator is set to null, "
         "in any program built on dlreset's DataLoader.\n"
         ".SH FILES\n.TP\n.I " + roff(DLRESET_DATA_DIR) + "\n"
         "The Fashion\\-MNIST IDX files (Debian: dataset\\-fashion\\-mnist), unless \\-\\-data names "
         "another directory.\n"
         ".SH SEE ALSO\ndlreset\\-watch(1). The README and docs of dlreset, installed with it in "
         "share/doc/dlreset (/usr/share/doc/dlreset from the Debian package).\n";
}

/// What `run` needs beyond the parser's checks, folded into `options`: the flags, the device,
/// the job's ranks. The exit status of a usage error, said on stderr; nothing when the run can
/// go ahead.
std::optional<int> finish_run_options(const CLI::App& run, RunOptions& options, const RunFlags& flags, int argc,
                                      char** argv) {
  if (options.json_path == "-" && options.events_path == "-") {
    std::cerr << "dlreset: --json - and --events - would both write to stdout, as two JSON "
                 "documents in one stream; send one of them to a file.\n";
    return kExitUsage;
  }
  flags.apply(options);
  if (options.persistent_workers && options.workers == 0) {
    // PyTorch refuses persistent_workers with 0 workers; the command line means "as
    // persistent as possible", so 0 workers simply run without.
    options.persistent_workers = false;
  }
  try {
    workload::resolve_device(options.device);
  } catch (const std::invalid_argument& error) {
    std::cerr << "dlreset: --device: " << error.what() << "\n";
    return kExitUsage;
  }
  options.argv.assign(argv, argv + argc);
#if DLRESET_HAVE_DIST
  try {
    resolve_job(options, run.count("--ranks") > 0, [](const char* name) { return std::getenv(name); });
  } catch (const dist::DistError& error) {
    std::cerr << "dlreset: " << error.what() << "\n";
    return kExitUsage;
  }
#else
  static_cast<void>(run);
  if (options.ranks > 1 || std::getenv("WORLD_SIZE") != nullptr) {
    std::cerr << "dlreset: this dlreset was built without c10d's Gloo, so it runs no multi-rank job; "
                 "install libgloo-dev and build it again.\n";
    return kExitUsage;
  }
#endif
  return std::nullopt;
}

/// The demo's choices given as text, into `options` (the parser checked them already).
void finish_demo_options(DemoOptions& options, const std::string& color, const std::string& method) {
  options.color = color == "always" ? ColorMode::always : color == "never" ? ColorMode::never : ColorMode::automatic;
  options.start_method = *data::parse_start_method(method);
}

/// A command's failure, said in one line on stderr, and its exit status.
int status_for_failure(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const data::InterruptedError& error) {
    // Unwinding to here destroyed the loaders: their workers are shut down and reaped.
    std::cerr << "dlreset: interrupted by signal " << error.signal_number() << " ("
              << strsignal(error.signal_number()) << "); the DataLoader workers were shut down.\n";
    return exit_status_for_signal(error.signal_number());
  } catch (const data::DatasetError& error) {
    std::cerr << "dlreset: the data set cannot be used: " << error.what() << "\n";
    return kExitFailure;
  } catch (const std::exception& error) {
    std::cerr << "dlreset: " << error.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace

int main_cli(int argc, char** argv) {
  CLI::App app{"dlreset: reproduce, measure and guard against the DataLoader worker reset of "
               "PyTorch Lightning 1.5.0 (issue #10389)"};
  app.name("dlreset");
  // DLRESET_VERSION is the CMake project's version (app/CMakeLists.txt).
  const std::string version = "dlreset " DLRESET_VERSION;
  app.set_version_flag("--version", version + " (built with LibTorch " TORCH_VERSION ")");
  // Hidden (no group): the build writes dlreset.1 and the bash completion with these, from the
  // app defined here.
  app.add_flag_callback("--man-page", [&app, &version] {
       std::cout << man_page(app, version, dlreset_man_page_sections());
       throw CLI::Success();
     }, "Print the man page (roff) and exit")->group("");
  app.add_flag_callback("--bash-completion", [&app] {
       std::cout << bash_completion(app);
       throw CLI::Success();
     }, "Print the bash completion script and exit")->group("");
  app.require_subcommand(1);

  RunOptions run_options;
  RunFlags run_flags;
  CLI::App* run = app.add_subcommand(
      "run", "Fit a CNN on Fashion-MNIST with one variant; report epoch times, worker spawns, "
             "iterator resets and dataset loads per loader");
  AcceptedValues run_accepted;
  add_run_options(*run, run_accepted, run_options, run_flags);

  DemoOptions demo_options;
  std::string demo_color = "auto";
  std::string demo_method = data::to_string(demo_options.start_method);
  CLI::App* demo = app.add_subcommand(
      "demo", "Walk through the investigation of the bug in six steps: symptom, profiler, anomaly, "
              "hook, root cause, fix (for workshops; under two minutes with the defaults)");
  AcceptedValues demo_accepted;
  add_demo_options(*demo, demo_accepted, demo_options, demo_color, demo_method);

  WatchCommandOptions watch_options;
  WatchFlags watch_flags;
  CLI::App* watch = app.add_subcommand("watch", kWatchDescription);
  AcceptedValues watch_accepted;
  add_watch_options(*watch, watch_accepted, watch_options, watch_flags, "dlreset watch");

  // `dlreset watch [options] -- COMMAND...`: what follows `--` is the command, untouched by the
  // parser (CLI11 would take it as positionals, which watch has none of).
  std::vector<std::string> command_after_dashes;
  if (argc > 2 && std::strcmp(argv[1], "watch") == 0) command_after_dashes = split_command(argc, argv, 2);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    const AcceptedValues* accepted = run->parsed()     ? &run_accepted
                                     : demo->parsed()  ? &demo_accepted
                                     : watch->parsed() ? &watch_accepted
                                                       : nullptr;
    std::cerr << "dlreset: " << usage_message(error, accepted) << "\n";
    return kExitUsage;
  }

  try {
    if (run->parsed()) {
      if (const std::optional<int> bad = finish_run_options(*run, run_options, run_flags, argc, argv)) return *bad;
      const SignalGuard stop_signals;
      return status_after_signals(run_command(run_options));
    }
    if (watch->parsed()) {
      if (const std::optional<int> bad = finish_watch_options(*watch, watch_options, watch_flags,
                                                              command_after_dashes, "dlreset: watch")) {
        return *bad;
      }
      return watch_command(watch_options);
    }
    if (demo->parsed()) {
      finish_demo_options(demo_options, demo_color, demo_method);
      // Ctrl-C in a workshop stops a run's workers cleanly, or ends the wait for Enter.
      const SignalGuard stop_signals;
      return status_after_signals(demo_command(demo_options));
    }
  } catch (...) {
    return status_for_failure(std::current_exception());
  }
  return kExitUsage;
}

}  // namespace dlreset::app
