#include "harness/app/cli.h"

#include <CLI/CLI.hpp>

#include <cstring>
#include <iostream>
#include <limits>
#include <map>

#include "harness/app/run_options.h"
#include "harness/app/signal_guard.h"
#include "harness/data/errors.h"
#include "harness/data/interrupt.h"
#include "harness/workload/device.h"

namespace dlreset::app {

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

/// What each flag accepts, appended to CLI11's message so a bad value gets one line that names
/// the flag and says what would do.
const std::map<std::string, std::string>& accepted_values() {
  static const std::map<std::string, std::string> accepted = {
      {"--variant", "buggy, fixed, workaround or vanilla"},
      {"--workers", "an integer from 0 to 64"},
      {"--epochs", "an integer from 1 to 100000"},
      {"--batch-size", "an integer from 1 to 60000"},
      {"--start-method", "thread, fork or spawn"},
      {"--limit-train-batches", "an integer of 0 or more"},
      {"--limit-val-batches", "an integer of 0 or more"},
      {"--num-sanity-val-steps", "an integer of -1 (all) or more"},
      {"--data", "a directory holding the Fashion-MNIST IDX files"},
      {"--device", "auto, cpu or cuda"},
      {"--optimizer", "sgd or adam"},
      {"--lr", "a positive number"},
      {"--intra-op-threads", "an integer from 1 to 256"},
      {"--seed", "an unsigned integer"},
      {"--json", "a file path, or - for stdout"},
      {"--events", "a file path, or - for stdout"},
  };
  return accepted;
}

std::string usage_message(const CLI::ParseError& error) {
  std::string message = error.what();
  for (const auto& [flag, accepted] : accepted_values()) {
    if (message.rfind(flag + ":", 0) == 0 || message.rfind(flag + " ", 0) == 0) {
      message += " (" + flag + " accepts " + accepted + ")";
      break;
    }
  }
  return message;
}

void add_run_options(CLI::App& run, RunOptions& options, std::string& variant, std::string& method,
                     bool& no_persistent, bool& no_pin, bool& no_progress) {
  run.add_option("--variant", variant, "buggy (Lightning 1.5.0), fixed (1.5.1), workaround "
                 "(1.5.0 with the reporter's patch) or vanilla (no Lightning)")
      ->check(CLI::IsMember({"buggy", "fixed", "workaround", "vanilla"}))
      ->capture_default_str();
  run.add_option("--workers", options.workers, "DataLoader workers per loader (0: load in the main process)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  run.add_option("--epochs", options.epochs, "Training epochs")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  run.add_option("--batch-size", options.batch_size, "Samples per batch")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{60000}))
      ->capture_default_str();
  run.add_flag("--no-persistent-workers", no_persistent,
               "Give the loaders persistent_workers=False (a new set of workers every pass)");
  run.add_flag("--no-pin-memory", no_pin, "Give the loaders pin_memory=False");
  run.add_option("--start-method", method, "How workers start: thread, fork or spawn")
      ->check(CLI::IsMember({"thread", "fork", "spawn"}))
      ->capture_default_str();
  run.add_option("--limit-train-batches", options.limit_train_batches,
                 "Training batches per epoch (default: all 938 at batch size 64)")
      ->check(CLI::Range(std::int64_t{0}, std::numeric_limits<std::int64_t>::max()));
  run.add_option("--limit-val-batches", options.limit_val_batches,
                 "Validation batches per epoch (default: all 157 at batch size 64)")
      ->check(CLI::Range(std::int64_t{0}, std::numeric_limits<std::int64_t>::max()));
  run.add_option("--num-sanity-val-steps", options.num_sanity_val_steps,
                 "Validation batches of the sanity check before training (-1: all)")
      ->check(CLI::Range(-1, std::numeric_limits<int>::max()))
      ->capture_default_str();
  run.add_option("--data", options.data_dir, "Directory of the Fashion-MNIST IDX files")
      ->capture_default_str();
  run.add_option("--device", options.device, "auto (CUDA when available), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  run.add_option("--optimizer", options.optimizer, "sgd (with momentum 0.9) or adam")
      ->check(CLI::IsMember({"sgd", "adam"}))
      ->capture_default_str();
  run.add_option("--lr", options.learning_rate, "Learning rate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run.add_option("--intra-op-threads", options.intra_op_threads,
                 "LibTorch intra-op threads on CPU (1 is fastest on a small machine)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  run.add_option("--seed", options.seed, "Seeds the shuffle, the workers and the weights")
      ->capture_default_str();
  run.add_flag("--trace-resets", options.trace_resets,
               "Print a Python-style traceback to stderr every time a loader's iterator is set "
               "to null (also: DLRESET_TRACE_RESETS=1)");
  run.add_flag("--profiler", options.profiler, "Print Lightning's SimpleProfiler report");
  run.add_option("--json", options.json_path,
                 "Write the report as JSON to this file (-: stdout, and nothing else goes there)");
  run.add_option("--events", options.events_path,
                 "Write the workers' lifecycle events (spawn, load, shutdown, exit) as JSON");
  run.add_flag("--no-progress", no_progress, "No progress bar on stderr");
}

}  // namespace

int main_cli(int argc, char** argv) {
  CLI::App app{"dlreset: reproduce, measure and guard against the DataLoader worker reset of "
               "PyTorch Lightning 1.5.0 (issue #10389)"};
  app.name("dlreset");
  app.set_version_flag("--version", "dlreset 0.1.0");
  app.require_subcommand(1);

  RunOptions run_options;
  std::string variant = variants::to_string(run_options.variant);
  std::string method = data::to_string(run_options.start_method);
  bool no_persistent = false;
  bool no_pin = false;
  bool no_progress = false;
  CLI::App* run = app.add_subcommand(
      "run", "Fit a CNN on Fashion-MNIST with one variant; report epoch times, worker spawns, "
             "iterator resets and dataset loads per loader");
  add_run_options(*run, run_options, variant, method, no_persistent, no_pin, no_progress);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    std::cerr << "dlreset: " << usage_message(error) << "\n";
    return kExitUsage;
  }

  try {
    if (run->parsed()) {
      run_options.variant = *variants::parse_variant(variant);
      run_options.start_method = *data::parse_start_method(method);
      run_options.persistent_workers = !no_persistent;
      run_options.pin_memory = !no_pin;
      run_options.progress = !no_progress;
      if (run_options.persistent_workers && run_options.workers == 0) {
        // PyTorch refuses persistent_workers with 0 workers; the command line means "as
        // persistent as possible", so 0 workers simply run without.
        run_options.persistent_workers = false;
      }
      try {
        workload::resolve_device(run_options.device);
      } catch (const std::invalid_argument& error) {
        std::cerr << "dlreset: --device: " << error.what() << "\n";
        return kExitUsage;
      }
      const SignalGuard stop_signals;
      const int status = run_command(run_options);
      // A signal that came after the last batch still ends the command as interrupted.
      if (const int signal_number = data::interrupt_requested()) {
        std::cerr << "dlreset: interrupted by signal " << signal_number << " ("
                  << strsignal(signal_number) << ") after the fit had finished.\n";
        return exit_status_for_signal(signal_number);
      }
      return status;
    }
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
  return kExitUsage;
}

}  // namespace dlreset::app
