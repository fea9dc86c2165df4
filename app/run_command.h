// `dlreset run`: its options on the command line, their checks after the parse, and the run.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "app/run_options.h"
#include "harness/cli/accepted_values.h"
#include "harness/cli/command_line.h"

namespace dlreset::app {

/// The flags of `run` that the parser fills as text or as a negated switch, and that fold into
/// RunOptions once parsed (apply).
struct RunFlags {
  std::string variant = variants::to_string(RunOptions{}.variant);
  std::string method = data::to_string(RunOptions{}.start_method);
  std::string seed_mode = data::to_string(RunOptions{}.seed_mode);
  bool no_persistent = false;
  bool no_pin = false;
  bool no_progress = false;

  void apply(RunOptions& options) const;
};

/// The names --start-method takes, from the enum's own list: `run`'s and `demo`'s.
std::vector<std::string> start_method_names();

using RunCommandLine = cli::CommandLine<RunOptions, RunFlags>;

/// Adds `run` to `parent` and defines its options, each with its check and words in
/// `run.accepted`, in the order --help, the man page and the bash completion list them.
void add_run_command(CLI::App& parent, RunCommandLine& run);

/// What `run` needs beyond the parser's checks, folded into `run.options`: the flags, the
/// device, the job's ranks. The exit status of a usage error, said on stderr; nothing when the
/// run can go ahead.
std::optional<int> finish_run_options(RunCommandLine& run, int argc, char** argv);

/// Runs it, printing the summary (or JSON); returns the process exit status.
int run_command(const RunOptions& options);

}  // namespace dlreset::app
