// A multi-node job runs one watcher a node, each writing its own report (`--json`); the merge
// reads those reports and makes the job's: its nodes and their ranks, each check summed over the
// nodes, the input wait recomputed from every rank's sums, and ranks that two nodes both claim.
// docs/watch.md, "Multi-node jobs", says what is summed and how.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "watch/analysis/checks/check_spec.h"
#include "watch/analysis/input_wait.h"

namespace dlreset::watch {

/// The report schema version the merge reads: one watcher's `--json` of this release.
inline constexpr int kMergedSchemaVersion = 3;

/// One node's report, as the merge names it.
struct MergedNode {
  std::string file;  ///< The report's path, as given.
  std::string host;  ///< Its "host"; empty where the report does not say.
  std::string command;
  std::vector<int> ranks;          ///< The global ranks its hook saw, each once, in order.
  std::optional<int> exit_status;  ///< The program's status on the node; empty: not known.
};

/// A check over the whole job.
struct MergedCheck {
  const CheckSpec* spec = nullptr;
  long count = 0;                 ///< Summed over the nodes.
  std::vector<long> counts;       ///< Each node's count, in the order of the nodes.
  std::optional<double> measure;  ///< A measured check's: the job's (see merge_reports).
  /// Seen on every node; where a node could not see it, `unseen_why` names the node and why.
  bool seen = true;
  std::string unseen_why;
};

/// A rank (a process that measured its waits), with the node it ran on.
struct MergedRank {
  std::size_t node = 0;  ///< An index into MergedReport::nodes.
  ProcessWait wait;      ///< Its pid, rank and waits (wait_s, step_s and passes).
};

/// A global rank that more than one node reported.
struct DuplicateRank {
  int rank = 0;
  std::vector<std::size_t> nodes;  ///< Indices into MergedReport::nodes.
};

struct MergedReport {
  std::vector<MergedNode> nodes;
  std::vector<MergedCheck> checks;  ///< One a row of the checks' table, in its order.
  std::vector<MergedRank> ranks;    ///< In the order of their ranks, then nodes.
  WaitTotals job;                   ///< The sums of every rank's wait_s, step_s and passes.
  std::string straggler;            ///< input_straggler over every rank of every node; empty: none.
  std::vector<DuplicateRank> duplicates;

  const MergedCheck& check(const std::string& name) const;
};

/// The report in `path`; throws std::invalid_argument, with one sentence naming the file and
/// what is wrong with it, where it cannot be read, is not JSON, is not a watch's report or is one
/// of another schema version.
nlohmann::json read_watch_report(const std::string& path);

/// The job's report from its nodes' (each a path and its document, as read_watch_report gives
/// it). Counts are summed. A measure is the job's: the input wait's fraction from the sums of
/// every rank's waits, any other the largest of the nodes' (each measured gate caps a worst case).
/// A check that a node could not see is not seen by the job.
MergedReport merge_reports(const std::vector<std::pair<std::string, nlohmann::json>>& reports);

/// The merge's summary: the nodes, the checks, the input wait by rank and the verdicts.
std::string merged_summary(const MergedReport& merged);

/// The merged report as JSON: schema "dlreset.watch.merged" (docs/watch.md, "Multi-node jobs").
nlohmann::json merged_json(const MergedReport& merged);

/// "node 2 (node1.json, host b)": how the summary and the gates name a node.
std::string node_name(const MergedReport& merged, std::size_t node);

}  // namespace dlreset::watch
