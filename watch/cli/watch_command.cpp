#include "watch/cli/watch_command.h"

#include <fmt/format.h>

#include <unistd.h>

#include <array>
#include <cstring>
#include <iostream>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <utility>

#include "harness/cli/exit_status.h"
#include "harness/cli/json_file.h"
#include "watch/analysis/checks/checks.h"
#include "watch/analysis/generations.h"
#include "watch/analysis/python_view.h"
#include "watch/analysis/watch_report.h"
#include "watch/cli/live_lines.h"
#include "watch/hook/hook_channel.h"
#include "watch/report/report_json.h"
#include "watch/report/summary_text.h"
#include "watch/report/timeline_json.h"

namespace dlreset::watch {

namespace {

WatchMode parse_mode(const std::string& mode) {
  if (mode == "connector") return WatchMode::connector;
  if (mode == "poll") return WatchMode::poll;
  return WatchMode::automatic;
}

bool write_report(const std::string& program, const std::string& path, const nlohmann::json& document,
                  const char* flag) {
  try {
    cli::write_json(path, document);
    return true;
  } catch (const std::runtime_error& error) {
    std::cerr << program << ": " << flag << ": " << error.what() << "\n";
    return false;
  }
}

}  // namespace

void add_watch_command(CLI::App& parent, WatchCommandLine& watch) {
  watch.app = parent.add_subcommand("watch", kWatchDescription);
  add_watch_options(watch, "dlreset watch");
}

namespace {

/// What is watched and how: --pid, --mode, --poll-ms, --memory-interval, --epoch-regex.
void add_target_options(CLI::App& watch, cli::AcceptedValues& accepted, WatchCommandOptions& options) {
  accepted.add(watch.add_option("--pid", options.pid,
                                "Attach to this running process instead of running a command (the Python hook "
                                "cannot be put in a process that has started)"),
               cli::integer_in(1, cli::kIntMax));
  accepted.add_shown(watch.add_option("--mode", options.mode,
                                      "How the tree is followed: auto (the kernel's process events "
                                      "connector where it can be opened, as root; else poll), connector "
                                      "or poll"),
                     cli::one_of({"auto", "connector", "poll"}));
  accepted.add_shown(watch.add_option("--poll-ms", options.poll_ms,
                                      "Poll mode: look at /proc every this many milliseconds"),
                     cli::integer_in(1, 10000));
  accepted.add_shown(watch.add_option("--memory-interval", options.memory_interval_s,
                                      "Read each process's memory (PSS, private and shared, from "
                                      "/proc/PID/smaps_rollup) every this many seconds, for the worker_memory and "
                                      "copy_on_read checks; 0 reads none"),
                     cli::finite_number_in(0.0, 3600.0));
  watch.add_option("--epoch-regex", options.epoch_regex,
                   "Lines of the program's stdout or stderr that match this ECMAScript regular "
                   "expression mark the start of an epoch; a progress bar's redraws (lines ended by a "
                   "carriage return) count once for each new text they match. Both streams then pass "
                   "through the watcher unchanged; PYTHONUNBUFFERED=1 is set so Python prints line by line");
}

/// The hang watchdog: --hang-timeout, --on-hang.
void add_hang_options(CLI::App& watch, cli::AcceptedValues& accepted, WatchCommandOptions& options) {
  accepted.add(watch.add_option("--hang-timeout", options.hang_timeout_s,
                                "Call the program hung when, for this many seconds, no loader of a process with an "
                                "iterator in progress hands out a batch (where the Python hook is on and torch is "
                                "imported), or else the whole process tree uses no CPU; then print every "
                                "process's stack (Python's through the hook, native ones with eu-stack or gdb)"),
               cli::finite_number_in(0.1, 604800.0));
  accepted.add_shown(watch.add_option("--on-hang", options.on_hang,
                                      "What a hang does: stop (end the program, exit status 124) or report (say so "
                                      "and go on watching)"),
                     cli::one_of({"stop", "report"}));
}

/// What the watch writes and what it puts in the program: --json, --events, --no-python-trace.
void add_output_options(CLI::App& watch, cli::AcceptedValues& accepted, WatchCommandOptions& options,
                        WatchFlags& flags) {
  // The watched program's output goes to stdout, so the reports must go to files.
  accepted.add(watch.add_option("--json", options.json_path, "Write the report as JSON to this file"),
               cli::output_file(/*stdout_allowed=*/false));
  accepted.add(watch.add_option("--events", options.events_path,
                                "Write the workers' lives and the resets as a timeline (the format of dlreset "
                                "run --events, drawn by plots/plot_timeline.py)"),
               cli::output_file(/*stdout_allowed=*/false));
  accepted.add_switch(
      watch.add_flag("--no-python-trace", flags.no_python_trace,
                     "Do not put the Python hook in the program's Python processes: no tracebacks, loaders, extra "
                     "iterators or set_epoch order (the process tree is still followed)"));
}

/// "Fail on any respawn, leaked worker, extra iterator or late set_epoch (the same as
/// --max-respawns 0 ...)": --expect-clean's help, from the checks it sets.
std::string expect_clean_help() {
  std::vector<const CheckSpec*> clean;
  for (const CheckSpec& spec : checks()) {
    if (spec.flags.expect_clean != nullptr) clean.push_back(&spec);
  }
  std::string any;
  std::string same;
  for (std::size_t i = 0; i < clean.size(); ++i) {
    any += std::string(i == 0 ? "" : i + 1 == clean.size() ? " or " : ", ") + clean[i]->flags.expect_clean;
    same += std::string(i == 0 ? "" : " ") + clean[i]->flags.gate_flag + " 0";
  }
  return "Fail on any " + any + " (the same as " + same + ")";
}

}  // namespace

void add_gate_options(CLI::App& app, cli::AcceptedValues& accepted, std::vector<Gate>& gates, bool& expect_clean) {
  for (Gate& gate : gates) {
    if (gate.check->flags.expect_flag == nullptr) continue;
    accepted.add_switch(app.add_flag(gate.check->flags.expect_flag, gate.expected, gate.check->flags.expect_help));
  }
  accepted.add_switch(app.add_flag("--expect-clean", expect_clean, expect_clean_help()));
  for (Gate& gate : gates) {
    const GateLimit kind = gate.check->flags.limit;
    accepted.add(app.add_option(gate.check->flags.gate_flag, gate.limit, gate.check->flags.help),
                 kind == GateLimit::fraction  ? cli::finite_number_in(0.0, 1.0)
                 : kind == GateLimit::seconds ? cli::finite_number_from(0.0)
                                              : cli::integer_in(0, cli::kIntMax));
  }
}

void finish_gates(std::vector<Gate>& gates, bool expect_clean) {
  // An --expect-* flag tightens a gate to 0; a --max-* of 0 given too says the same.
  const auto expect_none = [](Gate& gate, const char* flag) {
    if (gate.limit != 0) gate.set_by = flag;
    gate.limit = 0;
  };
  for (Gate& gate : gates) {
    if (gate.expected) expect_none(gate, gate.check->flags.expect_flag);
  }
  if (expect_clean) {
    for (Gate& gate : gates) {
      if (gate.check->flags.expect_clean != nullptr) expect_none(gate, "--expect-clean");
    }
  }
}

void add_watch_options(WatchCommandLine& command, const std::string& usage) {
  CLI::App& watch = *command.app;
  cli::AcceptedValues& accepted = command.accepted;
  add_target_options(watch, accepted, command.options);
  add_output_options(watch, accepted, command.options, command.flags);
  add_hang_options(watch, accepted, command.options);
  add_gate_options(watch, accepted, command.options.gates, command.flags.expect_clean);
  accepted.add_switch(
      watch.add_flag("--no-live", command.flags.no_live,
                     "No line on stderr at each respawn or reset as it is found (the summary still comes at the end)"));
  accepted.add_shown(watch.add_option("--generation-window-ms", command.options.generation_window_ms,
                                      "Workers of one parent that start within this many milliseconds "
                                      "of the first, before any of them ends, are one generation"),
                     cli::integer_in(1, 600000));
  // Everything from the first word that is not one of the options above (or after `--`) is the
  // command and its own arguments, as with `nice` or `timeout`.
  watch.prefix_command();
  watch.footer(
      fmt::format("Put COMMAND [ARGS...] after the options and a lone -- (as in the first example). Examples:\n"
                  "  {0} --expect-persistent --epoch-regex '^Epoch' -- python3 train.py\n"
                  "  {0} --expect-clean --max-live-workers 8 -- sh train.sh\n"
                  "  {0} --pid 4242 --json report.json\n"
                  "  {0} merge --max-respawns 0 node0.json node1.json   (a multi-node job: merges each node's "
                  "--json report; {0} merge --help lists its options)\n"
                  "Exit status: 0 when the program succeeded and every gate held; the program's own when it "
                  "failed (128 + N for a signal, 127: not found, 126: cannot run; its own {1} is reported as 1); "
                  "{2} when the watch ended a hung program (its own {2} is then reported as 1); "
                  "{1} when the program succeeded and a gate failed; 1 when a report could not be written; 2 for "
                  "bad input. docs/watch.md has the details.",
                  usage, kExitGateFailed, kExitHung));
  watch.allow_extras();
}

std::string watch_man_page_sections() {
  return fmt::format(".SH EXIT STATUS\n"
                     "0 when the program succeeded and every gate held; the program's own status when it failed "
                     "(128 + N for signal N, 127 for a command not found, 126 for one that cannot run; a program's "
                     "own {0} is reported as 1); {1} when the watch ended a hung program (its own {1} is then reported "
                     "as 1); {0} when the program succeeded and a gate failed; 1 when a report "
                     "could not be written; 2 for a bad flag or value.\n"
                     ".SH MULTI-NODE JOBS\n"
                     "A job on several machines runs one watcher a node, each with its own \\-\\-json report. "
                     "\\fBdlreset\\-watch merge\\fR [gate options] [\\-\\-json \\fIOUT\\fR] \\fIREPORT\\fR... "
                     "reads them and prints the job's summary: each node and its ranks, each check summed over the "
                     "nodes, the input wait from every rank's sums and the input straggler over all ranks, and a "
                     "rank two nodes both report. It holds the same gates, with the same exit statuses; a check a "
                     "node could not see fails its gate and names the node. A file that is not a report of this "
                     "schema version exits 2.\n"
                     ".SH ENVIRONMENT\n"
                     ".TP\n.B DLRESET_WATCH_HOOK_DIR\n"
                     "The folder of the Python hook's sitecustomize.py, instead of share/dlreset/python beside the "
                     "binary's bin/.\n"
                     ".TP\n.B PYTHONPATH\n"
                     "The watched program gets the hook's folder first on it, its own entries after.\n"
                     ".TP\n.B DLRESET_WATCH_SOCKET\n"
                     "Set for the watched program: the socket its Python processes report to.\n"
                     ".SH FILES\n.TP\n.I /usr/share/dlreset/python/sitecustomize.py\n"
                     "The Python hook's bootstrap (from the Debian package).\n"
                     ".TP\n.I /usr/share/dlreset/python/_dlreset_hook/\n"
                     "The Python hook's channel, state and patches, which the bootstrap loads.\n"
                     ".SH SEE ALSO\ndlreset(1); docs/watch.md in the docs of dlreset.\n",
                     kExitGateFailed, kExitHung);
}

std::vector<std::string> split_command(int& argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") != 0) continue;
    std::vector<std::string> command(argv + i + 1, argv + argc);
    argc = i;
    return command;
  }
  return {};
}

std::optional<int> finish_watch_options(WatchCommandLine& watch, const std::vector<std::string>& command_after_dashes,
                                        const std::string& prefix) {
  WatchCommandOptions& options = watch.options;
  const WatchFlags& flags = watch.flags;
  options.command = watch.app->remaining();
  if (!options.command.empty() && !command_after_dashes.empty()) {
    std::cerr << prefix << ": '" << options.command.front()
              << "' is not an option of watch; put the whole command after --.\n";
    return cli::kExitUsage;
  }
  if (options.command.empty()) options.command = command_after_dashes;
  if (options.command.empty() && options.pid == 0) {
    std::cerr << prefix << " needs a command to run (" << options.program_name
              << " [options] -- COMMAND [ARGS...]) or a process to attach to (--pid N).\n";
    return cli::kExitUsage;
  }
  if (!options.command.empty() && options.pid != 0) {
    std::cerr << prefix << " takes a command or --pid " << options.pid << ", not both: drop one.\n";
    return cli::kExitUsage;
  }
  finish_gates(options.gates, flags.expect_clean);
  options.live = !flags.no_live;
  options.python_trace = !flags.no_python_trace;
  return std::nullopt;
}

namespace {

/// The watcher's settings from the command's; the status of a usage error where the epoch
/// pattern is not a regular expression. `hook_note` says why the hook is off where its files
/// were not found.
std::optional<int> watcher_options(const WatchCommandOptions& options, WatchOptions& watch_options,
                                   std::string& hook_note) {
  watch_options.command = options.command;
  watch_options.attach_pid = options.pid;
  watch_options.mode = parse_mode(options.mode);
  watch_options.poll_ms = options.poll_ms;
  watch_options.memory_interval_s = options.memory_interval_s;
  watch_options.hang_timeout_s = options.hang_timeout_s;
  watch_options.stop_on_hang = options.on_hang == "stop";
  if (!options.epoch_regex.empty()) {
    try {
      watch_options.epoch_regex.emplace(options.epoch_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& error) {
      std::cerr << options.program_name << ": --epoch-regex: '" << options.epoch_regex
                << "' is not a valid regular expression (" << error.what() << ").\n";
      return cli::kExitUsage;
    }
  }
  if (options.python_trace && options.pid == 0) {
    if (const std::optional<std::string> dir = find_hook_dir()) {
      watch_options.python_hook_dir = *dir;
    } else {
      hook_note = "off: its files were not found (share/dlreset/python/sitecustomize.py and _dlreset_hook/ beside the "
                  "binary's bin/, or DLRESET_WATCH_HOOK_DIR); reinstall dlreset-watch";
    }
  }
  return std::nullopt;
}

/// The program's status as the watch reports it: its own failure is the first news, and a
/// stopped watch of a process attached to ends as the signal asked.
int program_status(const WatchCommandOptions& options, const WatchReport& report) {
  int status = report.program_status.value_or(0);
  if (report.result.attached && report.result.signal_received != 0 && !report.result.processes.front().end_s) {
    status = 128 + report.result.signal_received;
  }
  if (status == kExitGateFailed) {
    std::cerr << fmt::format("{}: the program itself exited {}, the status kept for a failed gate; reported as {}.\n",
                             options.program_name, kExitGateFailed, cli::kExitFailure);
    status = cli::kExitFailure;
  }
  if (options.hang_timeout_s > 0 && status == kExitHung) {
    std::cerr << fmt::format("{}: the program itself exited {}, the status kept for a hang; reported as {}.\n",
                             options.program_name, kExitHung, cli::kExitFailure);
    status = cli::kExitFailure;
  }
  if (report.result.hang_stop_s) status = kExitHung;
  return status;
}

/// Writes --json and --events; false where one could not be written.
bool write_reports(const WatchCommandOptions& options, const WatchReport& report, const nlohmann::json& gates,
                   int status) {
  bool written = true;
  if (!options.json_path.empty()) {
    nlohmann::json document = report_json(report);
    // The node the watch ran on: a multi-node job's merge names each node's report by it.
    std::array<char, 256> host{};
    if (gethostname(host.data(), host.size() - 1) == 0) document["host"] = std::string(host.data());
    document["gates"] = gates;
    document["watch_exit_status"] = status;
    written &= write_report(options.program_name, options.json_path, document, "--json");
  }
  if (!options.events_path.empty()) {
    written &= write_report(options.program_name, options.events_path, events_json(report), "--events");
  }
  return written;
}

}  // namespace

int watch_command(const WatchCommandOptions& options) {
  WatchOptions watch_options;
  std::string hook_note;
  if (const std::optional<int> bad = watcher_options(options, watch_options, hook_note)) return *bad;
  LiveLines live(options);
  live.attach(watch_options);

  WatchResult result;
  try {
    result = run_watch(watch_options);
  } catch (const WatchError& error) {
    std::cerr << options.program_name << ": " << error.what() << "\n";
    return error.exit_status();
  }
  if (!hook_note.empty()) result.python_hook = hook_note;
  WatchReport report =
      analyse_watch(std::move(result), options.command, options.epoch_regex, options.generation_window_ms / 1000.0);
  report.program = options.program_name;
  std::cerr << summary_text(report);

  int status = program_status(options, report);
  bool gate_failed = false;
  const nlohmann::json gates = hold_gates(options, report, std::cerr, gate_failed);
  if (gate_failed && status == 0) status = kExitGateFailed;
  if (!write_reports(options, report, gates, status) && status == 0) status = cli::kExitFailure;
  return status;
}

}  // namespace dlreset::watch
