#include "watch/report/report_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "watch/analysis/checks/checks.h"
#include "watch/report/optional_json.h"

namespace dlreset::watch {

namespace {

/// The check whose measure is the job's input wait: recomputed from the ranks' sums rather than
/// taken from one node, since a fraction of fractions is no fraction of the job's time.
constexpr const char* kInputWait = "input_wait";

std::string join(const nlohmann::json& words) {
  if (words.is_string()) return words.get<std::string>();
  std::string text;
  for (const auto& word : words) {
    if (word.is_string()) text += (text.empty() ? "" : " ") + word.get<std::string>();
  }
  return text;
}

std::optional<int> optional_int(const nlohmann::json& value) {
  return value.is_number_integer() ? std::optional<int>(value.get<int>()) : std::nullopt;
}

const nlohmann::json& field(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;
  return object.is_object() && object.contains(key) ? object.at(key) : kNull;
}

double number(const nlohmann::json& value) { return value.is_number() ? value.get<double>() : 0.0; }

/// Why a node could not see `name`: the report's own words, else the hook's state.
std::string unseen_why(const nlohmann::json& report, const nlohmann::json& check) {
  const nlohmann::json& why = field(check, "unseen_why");
  if (why.is_string() && !why.get<std::string>().empty()) return why.get<std::string>();
  const nlohmann::json& hook = field(field(report, "python"), "hook");
  return "the Python hook was " + (hook.is_string() ? hook.get<std::string>() : std::string("not reported"));
}

/// Adds node `index`'s check to the job's.
void merge_check(const MergedReport& merged, std::size_t index, const nlohmann::json& report, MergedCheck& job) {
  const nlohmann::json* found = nullptr;
  for (const auto& check : field(report, "checks")) {
    if (field(check, "name") == job.spec->flags.name) found = &check;
  }
  const std::string node = node_name(merged, index);
  const auto unseen = [&](const std::string& why) {
    job.seen = false;
    job.unseen_why += (job.unseen_why.empty() ? "" : "; ") + node + " could not see it: " + why;
  };
  if (found == nullptr) {
    job.counts.push_back(0);
    unseen(fmt::format("its report has no check {}", job.spec->flags.name));
    return;
  }
  const long count = field(*found, "count").is_number_integer() ? field(*found, "count").get<long>() : 0;
  job.counts.push_back(count);
  job.count += count;
  if (field(*found, "seen") != true) unseen(unseen_why(report, *found));
  const nlohmann::json& measure = field(*found, "measure");
  if (measure.is_number()) job.measure = std::max(job.measure.value_or(measure.get<double>()), measure.get<double>());
}

/// Node `index`'s ranks: those its hook saw, and those that measured their waits.
void merge_ranks(MergedReport& merged, std::size_t index, const nlohmann::json& report) {
  std::set<int> ranks;
  for (const auto& process : field(field(report, "python"), "processes")) {
    const std::optional<int> rank = optional_int(field(process, "rank"));
    if (field(process, "hook_loaded") == true && rank) ranks.insert(*rank);
  }
  for (const auto& entry : field(field(report, "input_wait"), "ranks")) {
    MergedRank rank;
    rank.node = index;
    rank.wait.pid = field(entry, "pid").is_number_integer() ? field(entry, "pid").get<pid_t>() : 0;
    rank.wait.rank = optional_int(field(entry, "rank"));
    const nlohmann::json& totals = field(entry, "totals");
    rank.wait.totals.wait_s = number(field(totals, "wait_s"));
    rank.wait.totals.step_s = number(field(totals, "step_s"));
    rank.wait.totals.passes = static_cast<int>(number(field(totals, "passes")));
    if (rank.wait.rank) ranks.insert(*rank.wait.rank);
    merged.ranks.push_back(rank);
  }
  merged.nodes[index].ranks.assign(ranks.begin(), ranks.end());
}

std::string percent(double fraction) { return fmt::format("{:.0f}%", 100.0 * fraction); }

std::string rank_words(const MergedRank& rank) {
  return rank.wait.rank ? fmt::format("rank {} (pid {})", *rank.wait.rank, rank.wait.pid)
                        : fmt::format("pid {}", rank.wait.pid);
}

std::string list(const std::vector<int>& numbers) {
  std::string text;
  for (const int number : numbers) text += (text.empty() ? "" : ", ") + std::to_string(number);
  return text;
}

}  // namespace

const MergedCheck& MergedReport::check(const std::string& name) const {
  for (const MergedCheck& check : checks) {
    if (name == check.spec->flags.name) return check;
  }
  throw std::out_of_range("the merged report has no check named " + name);
}

nlohmann::json read_watch_report(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::invalid_argument(fmt::format("{} cannot be read: give the path of a node's --json report.", path));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json report = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded()) {
    throw std::invalid_argument(fmt::format("{} is not JSON: give the report a node's dlreset watch --json wrote.",
                                            path));
  }
  if (field(report, "schema") != "dlreset.watch") {
    throw std::invalid_argument(
        fmt::format("{} is not a dlreset watch report (its schema is not \"dlreset.watch\"): give the report a "
                    "node's dlreset watch --json wrote.",
                    path));
  }
  const nlohmann::json& version = field(report, "schema_version");
  if (version != kMergedSchemaVersion) {
    throw std::invalid_argument(
        fmt::format("{} is a dlreset watch report of schema version {}, and the merge reads version {}: watch each "
                    "node with the same release as the merge.",
                    path, version.dump(), kMergedSchemaVersion));
  }
  if (!field(report, "checks").is_array()) {
    throw std::invalid_argument(fmt::format("{} is a dlreset watch report without its checks: write it again with "
                                            "dlreset watch --json.",
                                            path));
  }
  return report;
}

MergedReport merge_reports(const std::vector<std::pair<std::string, nlohmann::json>>& reports) {
  MergedReport merged;
  for (const auto& [file, report] : reports) {
    MergedNode node;
    node.file = file;
    if (field(report, "host").is_string()) node.host = field(report, "host").get<std::string>();
    node.command = join(field(report, "command"));
    node.exit_status = optional_int(field(report, "exit_status"));
    merged.nodes.push_back(node);
  }
  for (const CheckSpec& spec : checks()) {
    MergedCheck check;
    check.spec = &spec;
    merged.checks.push_back(check);
  }
  for (std::size_t index = 0; index < reports.size(); ++index) {
    for (MergedCheck& check : merged.checks) merge_check(merged, index, reports[index].second, check);
    merge_ranks(merged, index, reports[index].second);
  }
  std::stable_sort(merged.ranks.begin(), merged.ranks.end(), [](const MergedRank& a, const MergedRank& b) {
    return a.wait.rank.value_or(-1) < b.wait.rank.value_or(-1);
  });
  InputWait wait;
  for (const MergedRank& rank : merged.ranks) {
    merged.job.wait_s += rank.wait.totals.wait_s;
    merged.job.step_s += rank.wait.totals.step_s;
    merged.job.passes += rank.wait.totals.passes;
    wait.processes.push_back(rank.wait);
  }
  merged.straggler = input_straggler(wait);
  for (MergedCheck& check : merged.checks) {
    if (check.spec->flags.name != std::string(kInputWait)) continue;
    check.measure = merged.ranks.empty() ? std::nullopt : std::optional<double>(merged.job.fraction());
  }
  std::map<int, std::vector<std::size_t>> nodes_of_rank;
  for (std::size_t index = 0; index < merged.nodes.size(); ++index) {
    for (const int rank : merged.nodes[index].ranks) nodes_of_rank[rank].push_back(index);
  }
  for (const auto& [rank, nodes] : nodes_of_rank) {
    if (nodes.size() <= 1) continue;
    DuplicateRank duplicate;
    duplicate.rank = rank;
    duplicate.nodes = nodes;
    merged.duplicates.push_back(duplicate);
  }
  return merged;
}

std::string node_name(const MergedReport& merged, std::size_t node) {
  const MergedNode& entry = merged.nodes[node];
  return fmt::format("node {} ({}{})", node + 1, entry.file, entry.host.empty() ? "" : ", host " + entry.host);
}

std::string merged_summary(const MergedReport& merged) {
  std::string text = fmt::format("{} nodes, {} ranks\n", merged.nodes.size(), [&] {
    std::set<int> ranks;
    for (const MergedNode& node : merged.nodes) ranks.insert(node.ranks.begin(), node.ranks.end());
    return ranks.size();
  }());
  for (std::size_t index = 0; index < merged.nodes.size(); ++index) {
    const MergedNode& node = merged.nodes[index];
    const std::string ranks = node.ranks.empty()       ? "no rank"
                              : node.ranks.size() == 1 ? "rank " + list(node.ranks)
                                                       : "ranks " + list(node.ranks);
    text += fmt::format("  {}: {}: {}\n", node_name(merged, index), ranks, node.command);
  }
  text += "checks, summed over the nodes:\n";
  for (const MergedCheck& check : merged.checks) {
    std::string counts;
    for (const long count : check.counts) counts += (counts.empty() ? "" : " + ") + std::to_string(count);
    // A measured check's gate holds its measure; its count (the passes measured) comes second.
    text += "  " + std::string(check.spec->flags.name) + ": ";
    if (check.spec->flags.limit != GateLimit::count) {
      text += check.measure ? fmt::format("measure {:.2f}; count ", *check.measure) : "measure none; count ";
    }
    text += std::to_string(check.count);
    if (check.counts.size() > 1) text += " (" + counts + ")";
    text += check.seen ? "\n" : "; not seen: " + check.unseen_why + "\n";
  }
  if (!merged.ranks.empty()) {
    text += fmt::format("input wait: the job's ranks waited {} of their time for data ({:.2f} of {:.2f} s)\n",
                        percent(merged.job.fraction()), merged.job.wait_s, merged.job.wait_s + merged.job.step_s);
    for (const MergedRank& rank : merged.ranks) {
      const WaitTotals& totals = rank.wait.totals;
      text += fmt::format("  {} on node {} waited {} of its time for data ({:.2f} of {:.2f} s)\n", rank_words(rank),
                          rank.node + 1, percent(totals.fraction()), totals.wait_s, totals.wait_s + totals.step_s);
    }
    if (!merged.straggler.empty()) text += "  " + merged.straggler + "\n";
  }
  for (const DuplicateRank& duplicate : merged.duplicates) {
    std::string nodes;
    for (std::size_t i = 0; i < duplicate.nodes.size(); ++i) {
      nodes += std::string(i == 0                            ? ""
                           : i + 1 == duplicate.nodes.size() ? " and "
                                                             : ", ") +
               node_name(merged, duplicate.nodes[i]);
    }
    text += fmt::format("rank {} is reported by {}: the job is misconfigured (each node needs its own --node_rank, "
                        "and --nnodes the number of nodes), so its ranks are not one job's.\n",
                        duplicate.rank, nodes);
  }
  return text;
}

nlohmann::json merged_json(const MergedReport& merged) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const MergedNode& node : merged.nodes) {
    nodes.push_back({{"file", node.file},
                     {"host", node.host.empty() ? nlohmann::json() : nlohmann::json(node.host)},
                     {"command", node.command},
                     {"ranks", node.ranks},
                     {"exit_status", optional_json(node.exit_status)}});
  }
  nlohmann::json checks = nlohmann::json::array();
  for (const MergedCheck& check : merged.checks) {
    nlohmann::json entry = {
        {"name", check.spec->flags.name}, {"count", check.count}, {"counts", check.counts}, {"seen", check.seen}};
    if (check.spec->flags.limit != GateLimit::count) entry["measure"] = optional_json(check.measure);
    if (!check.seen) entry["unseen_why"] = check.unseen_why;
    checks.push_back(entry);
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (const MergedRank& rank : merged.ranks) {
    const WaitTotals& totals = rank.wait.totals;
    ranks.push_back({{"node", rank.node},
                     {"pid", rank.wait.pid},
                     {"rank", optional_json(rank.wait.rank)},
                     {"wait_s", totals.wait_s},
                     {"step_s", totals.step_s},
                     {"fraction", totals.fraction()},
                     {"passes", totals.passes}});
  }
  nlohmann::json duplicates = nlohmann::json::array();
  for (const DuplicateRank& duplicate : merged.duplicates)
    duplicates.push_back({{"rank", duplicate.rank}, {"nodes", duplicate.nodes}});
  return {{"schema", "dlreset.watch.merged"},
          {"schema_version", 1},
          {"nodes", nodes},
          {"checks", checks},
          {"input_wait",
           {{"job",
             {{"wait_s", merged.job.wait_s},
              {"step_s", merged.job.step_s},
              {"fraction", merged.job.fraction()},
              {"passes", merged.job.passes}}},
            {"ranks", ranks},
            {"straggler", merged.straggler.empty() ? nlohmann::json() : nlohmann::json(merged.straggler)}}},
          {"duplicate_ranks", duplicates}};
}

}  // namespace dlreset::watch
