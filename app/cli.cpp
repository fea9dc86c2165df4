#include "app/cli.h"

#include <CLI/CLI.hpp>

#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <torch/version.h>

#include "app/bash_completion.h"
#include "app/demo_command.h"
#include "app/run_command.h"
#include "app/signal_guard.h"
#include "harness/cli/accepted_values.h"
#include "harness/cli/exit_status.h"
#include "harness/cli/man_page.h"
#include "harness/data/core/errors.h"
#include "harness/data/core/interrupt.h"
#include "watch/cli/merge_command.h"
#include "watch/cli/watch_command.h"

namespace dlreset::app {

namespace {

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
         ".SH FILES\n.TP\n.I " +
         cli::roff(DLRESET_DATA_DIR) +
         "\n"
         "The Fashion\\-MNIST IDX files (Debian: dataset\\-fashion\\-mnist), unless \\-\\-data names "
         "another directory.\n"
         ".SH SEE ALSO\ndlreset\\-watch(1). The README and docs of dlreset, installed with it in "
         "share/doc/dlreset (/usr/share/doc/dlreset from the Debian package).\n";
}

/// A command's failure, said in one line on stderr, and its exit status.
int status_for_failure(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const data::InterruptedError& error) {
    // Unwinding to here destroyed the loaders: their workers are shut down and reaped.
    std::cerr << "dlreset: interrupted by signal " << error.signal_number() << " (" << strsignal(error.signal_number())
              << "); the DataLoader workers were shut down.\n";
    return exit_status_for_signal(error.signal_number());
  } catch (const data::DatasetError& error) {
    std::cerr << "dlreset: the data set cannot be used: " << error.what() << "\n";
    return cli::kExitFailure;
  } catch (const std::exception& error) {
    std::cerr << "dlreset: " << error.what() << "\n";
    return cli::kExitFailure;
  }
}

/// --man-page and --bash-completion, hidden (no group): the build writes dlreset.1 and the bash
/// completion with them, from the app as main_cli defines it. `app` and `version` must outlive
/// the parse.
void add_generator_flags(CLI::App& app, const std::string& version) {
  app.add_flag_callback(
         "--man-page",
         [&app, &version] {
           std::cout << cli::man_page(app, version, dlreset_man_page_sections());
           throw CLI::Success();
         },
         "Print the man page (roff) and exit")
      ->group("");
  app.add_flag_callback(
         "--bash-completion",
         [&app] {
           std::cout << bash_completion(app);
           throw CLI::Success();
         },
         "Print the bash completion script and exit")
      ->group("");
}

}  // namespace

int main_cli(int argc, char** argv) {
  CLI::App app{"dlreset: reproduce, measure and guard against the DataLoader worker reset of "
               "PyTorch Lightning 1.5.0 (issue #10389)"};
  app.name("dlreset");
  // DLRESET_VERSION is the CMake project's version (app/CMakeLists.txt).
  const std::string version = "dlreset " DLRESET_VERSION;
  app.set_version_flag("--version", version + " (built with LibTorch " TORCH_VERSION ")");
  add_generator_flags(app, version);
  app.require_subcommand(1);

  // In this order: --help lists the subcommands as added.
  RunCommandLine run;
  add_run_command(app, run);
  DemoCommandLine demo;
  add_demo_command(app, demo);
  watch::WatchCommandLine watch;
  watch::add_watch_command(app, watch);

  // `dlreset watch merge REPORT...`: the merge of a multi-node job's reports, a command of its own.
  if (argc > 2 && std::strcmp(argv[1], "watch") == 0 && std::strcmp(argv[2], "merge") == 0) {
    return watch::merge_main(argc - 2, argv + 2, "dlreset watch merge");
  }
  // `dlreset watch [options] -- COMMAND...`: what follows `--` is the command, untouched by the
  // parser (CLI11 would take it as positionals, which watch has none of).
  std::vector<std::string> command_after_dashes;
  if (argc > 2 && std::strcmp(argv[1], "watch") == 0) command_after_dashes = watch::split_command(argc, argv, 2);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    const cli::AcceptedValues* accepted = run.app->parsed()     ? &run.accepted
                                          : demo.app->parsed()  ? &demo.accepted
                                          : watch.app->parsed() ? &watch.accepted
                                                                : nullptr;
    std::cerr << "dlreset: " << cli::usage_message(error, accepted) << "\n";
    return cli::kExitUsage;
  }

  try {
    if (run.app->parsed()) {
      if (const std::optional<int> bad = finish_run_options(run, argc, argv)) return *bad;
      const SignalGuard stop_signals;
      return status_after_signals(run_command(run.options));
    }
    if (watch.app->parsed()) {
      if (const std::optional<int> bad = watch::finish_watch_options(watch, command_after_dashes, "dlreset: watch")) {
        return *bad;
      }
      return watch::watch_command(watch.options);
    }
    if (demo.app->parsed()) {
      finish_demo_options(demo);
      // Ctrl-C in a workshop stops a run's workers cleanly, or ends the wait for Enter.
      const SignalGuard stop_signals;
      return status_after_signals(demo_command(demo.options));
    }
  } catch (...) {
    return status_for_failure(std::current_exception());
  }
  return cli::kExitUsage;
}

}  // namespace dlreset::app
