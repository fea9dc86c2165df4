#include "watch/cli/merge_command.h"

#include <fmt/format.h>

#include <cstddef>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "harness/cli/accepted_values.h"
#include "harness/cli/exit_status.h"
#include "harness/cli/json_file.h"
#include "watch/analysis/checks/checks.h"
#include "watch/analysis/checks/gate_verdict.h"
#include "watch/cli/watch_command.h"

namespace dlreset::watch {

namespace {

/// "4 (node 1: 2, node 2: 2)": the job's count and where it came from.
std::string counts_words(const MergedReport& merged, const MergedCheck& check) {
  std::string nodes;
  for (std::size_t i = 0; i < check.counts.size(); ++i)
    nodes += fmt::format("{}node {}: {}", i == 0 ? "" : ", ", i + 1, check.counts[i]);
  return fmt::format("{} over the job's {} node{} ({})", check.count, merged.nodes.size(),
                     merged.nodes.size() == 1 ? "" : "s", nodes);
}

/// The program's status on the nodes: the first that failed, as the watch reports its own.
int programs_status(const MergeCommandOptions& options, const MergedReport& merged) {
  for (std::size_t node = 0; node < merged.nodes.size(); ++node) {
    const int status = merged.nodes[node].exit_status.value_or(0);
    if (status == 0) continue;
    std::cerr << fmt::format("{}: the program failed on {} (status {}).\n", options.program_name,
                             node_name(merged, node), status);
    return status == kExitGateFailed ? cli::kExitFailure : status;
  }
  return 0;
}

}  // namespace

nlohmann::json hold_merged_gates(const MergeCommandOptions& options, const MergedReport& merged, std::ostream& out,
                                 bool& failed) {
  const auto check_of = [&](const CheckSpec& spec) -> const MergedCheck& { return merged.check(spec.flags.name); };
  const auto say_failed = [&](const Gate& gate, const MergedCheck& check, const GateVerdict& verdict) {
    const CheckSpec& spec = *gate.check;
    const char* flag = gate.set_by != nullptr ? gate.set_by : spec.flags.gate_flag;
    if (!verdict.seen) {
      out << fmt::format("{}: {} cannot be checked: {}.\n", options.program_name, spec.flags.gate_flag,
                         check.unseen_why.empty() ? "no node measured it" : check.unseen_why);
    } else if (verdict.counted) {
      out << fmt::format("{}: {} counted {}, more than the {:g} allowed ({}).\n", options.program_name, spec.flags.name,
                         counts_words(merged, check), gate.limit, flag);
    } else {
      out << fmt::format("{}: {} measured {:.2f} over the job, more than the {:g} allowed ({}).\n",
                         options.program_name, spec.flags.name, verdict.value, gate.limit, flag);
    }
  };
  return hold_set_gates(options.gates, check_of, say_failed, failed);
}

int merge_command(const MergeCommandOptions& options) {
  std::vector<std::pair<std::string, nlohmann::json>> reports;
  for (const std::string& path : options.reports) {
    try {
      reports.emplace_back(path, read_watch_report(path));
    } catch (const std::invalid_argument& error) {
      std::cerr << options.program_name << ": " << error.what() << "\n";
      return cli::kExitUsage;
    }
  }
  const MergedReport merged = merge_reports(reports);
  std::cout << merged_summary(merged) << std::flush;
  int status = programs_status(options, merged);
  bool gate_failed = false;
  const nlohmann::json gates = hold_merged_gates(options, merged, std::cerr, gate_failed);
  if (gate_failed && status == 0) status = kExitGateFailed;
  if (!options.json_path.empty()) {
    nlohmann::json document = merged_json(merged);
    document["gates"] = gates;
    document["watch_exit_status"] = status;
    try {
      cli::write_json(options.json_path, document);
    } catch (const std::runtime_error& error) {
      std::cerr << options.program_name << ": --json: " << error.what() << "\n";
      if (status == 0) status = cli::kExitFailure;
    }
  }
  return status;
}

int merge_main(int argc, char** argv, const std::string& program) {
  CLI::App app{"Merge the reports of a multi-node job's watchers (one dlreset watch --json a node) into the job's "
               "summary, verdicts and gates, with every rank of every node"};
  app.name(program);
  MergeCommandOptions options;
  options.program_name = program;
  cli::AcceptedValues accepted;
  bool expect_clean = false;
  accepted.add(app.add_option("--json", options.json_path, "Write the merged report as JSON to this file"),
               cli::output_file(/*stdout_allowed=*/false));
  add_gate_options(app, accepted, options.gates, expect_clean);
  app.add_option("REPORT", options.reports, "Each node's report, as its dlreset watch --json wrote it");
  app.footer(fmt::format("Example:\n  {0} --max-respawns 0 node0.json node1.json\n"
                         "Exit status: 0 when every node's program succeeded and every gate held; the first failed "
                         "node's program status; {1} when a gate failed; 1 when the report could not be written; 2 "
                         "for bad input. docs/watch.md, \"Multi-node jobs\", has the details.",
                         program, kExitGateFailed));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help
    std::cerr << program << ": " << cli::usage_message(error, &accepted) << "\n";
    return cli::kExitUsage;
  }
  if (options.reports.empty()) {
    std::cerr << program << " needs the reports to merge, one a node (" << program
              << " [options] REPORT.json...), each written by dlreset watch --json.\n";
    return cli::kExitUsage;
  }
  finish_gates(options.gates, expect_clean);
  return merge_command(options);
}

}  // namespace dlreset::watch
