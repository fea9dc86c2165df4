// `dlreset-watch merge` (and `dlreset watch merge`): a multi-node job runs one watcher a node;
// the merge reads their reports and gives the job's summary, verdicts and gates, with every rank
// of every node.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "watch/cli/watch_options.h"
#include "watch/report/report_merge.h"

namespace dlreset::watch {

/// The settings of the merge, with the defaults its --help shows.
struct MergeCommandOptions {
  std::vector<std::string> reports;  ///< Each node's `--json` report.
  std::string json_path;             ///< Write the merged report here; empty: not written.
  std::vector<Gate> gates = unset_gates();
  std::string program_name = "dlreset-watch merge";  ///< How messages name the command.
};

/// Holds every gate of `options` against the job's checks: writes a line to `out` for each that
/// failed or that a node could not see (then `failed` is set), and returns the gates as JSON.
nlohmann::json hold_merged_gates(const MergeCommandOptions& options, const MergedReport& merged, std::ostream& out,
                                 bool& failed);

/// Merges and prints the summary on stdout, a failed gate's line on stderr. Exit status: that of
/// the first node whose program failed (its 99 reported as 1); 99 when every program succeeded
/// and a gate failed; 1 when the merged report could not be written; 2 for bad input (a file
/// that is not a watch's report of this schema version).
int merge_command(const MergeCommandOptions& options);

/// The whole command line after `merge` (argv[0] is "merge"): parses it and runs the merge.
/// `program` names the command in messages and --help ("dlreset-watch merge").
int merge_main(int argc, char** argv, const std::string& program);

}  // namespace dlreset::watch
