// `dlreset watch` (and `dlreset-watch`, the same command without LibTorch): is a training program
// killing its DataLoader workers? Runs it (or attaches to it) under the process-tree watcher, with
// the Python hook in its Python processes, and says: respawns and the stack behind them, the peak
// of live workers, leaks, extra iterators, passes that replay an order; gates turn each into an
// exit status.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "harness/cli/accepted_values.h"
#include "harness/cli/command_line.h"
#include "watch/cli/watch_options.h"

namespace dlreset::watch {

/// The one-line description of the command, for --help and the subcommand list.
inline constexpr const char* kWatchDescription =
    "Run a training program (watch [options] -- COMMAND [ARGS...]) or attach to one (--pid N), follow "
    "its process tree and report whether its DataLoader workers are replaced, leaked or left idle, "
    "with the Python stack that did it";

/// The flags that fold into WatchCommandOptions once parsed.
struct WatchFlags {
  bool expect_clean = false;
  bool no_live = false;
  bool no_python_trace = false;
};

using WatchCommandLine = cli::CommandLine<WatchCommandOptions, WatchFlags>;

/// Defines watch's options on `command.app` (a subcommand of dlreset, or dlreset-watch's own
/// app), each with its check and words in `command.accepted`. `usage` is how the examples call
/// it ("dlreset watch", "dlreset-watch").
void add_watch_options(WatchCommandLine& command, const std::string& usage);

/// Defines the gates' options on `app`: each check's --expect-* flag, --expect-clean (into
/// `expect_clean`) and each check's --max-* flag, into `gates` (one a check, unset_gates()).
void add_gate_options(CLI::App& app, cli::AcceptedValues& accepted, std::vector<Gate>& gates, bool& expect_clean);

/// Sets to 0 the gates that their --expect-* flag, or --expect-clean, asked for, after a parse.
void finish_gates(std::vector<Gate>& gates, bool expect_clean);

/// Adds `watch` to dlreset's `parent`, with add_watch_options.
void add_watch_command(CLI::App& parent, WatchCommandLine& watch);

/// The command after the first lone "--" at or after argv[first], which is taken off the
/// arguments (argc is cut there) so that the parser never sees it.
std::vector<std::string> split_command(int& argc, char** argv, int first);

/// Completes the options after a parse: the command, the gates, the switches. Bad input gets a
/// line on stderr (prefixed by `prefix`) and the exit status cli::kExitUsage, returned; nothing when all is well.
std::optional<int> finish_watch_options(WatchCommandLine& watch, const std::vector<std::string>& command_after_dashes,
                                        const std::string& prefix);

/// The closing sections of dlreset-watch(1) (EXIT STATUS, ENVIRONMENT, FILES, SEE ALSO).
std::string watch_man_page_sections();

/// Watches and prints the summary on stderr. Exit status: the program's own when it failed (128
/// + N for a signal, 127 for a command not found, 126 for one that cannot run; its own 99 is
/// reported as 1); 124 when it hung and the watch ended it; 99 when it succeeded and a gate
/// failed; 1 when a report could not be written; 2 for bad input.
int watch_command(const WatchCommandOptions& options);

}  // namespace dlreset::watch
