// The fd-growth check: descriptors that pile up from pass to pass. The watcher counts each
// training process's open descriptors by type at every pass's start (the hook's iterator_made and
// iterator_reset, watch/tree/fd_census.h); a type that grew at every pass of a process's loaders
// of one kind is a leak: whatever each pass made is kept (an iterator not shut down keeps its
// queues, a worker's Process object still referenced keeps its pipes: pytorch#91252).
#include <fmt/format.h>
#include <sys/types.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "watch/analysis/checks/checks.h"
#include "watch/analysis/wording.h"

namespace dlreset::watch {

namespace {

/// --max-fd-growth's --help.
constexpr const char* kHelp =
    "Fail if more descriptors than this piled up in one training process over the job, counting only the types "
    "(pipes, sockets, anon inodes, files) that grew at every pass of its loaders of one kind";

/// The fewest boundaries between passes that growth must be seen at: a type that grew across one
/// boundary may have met a pass whose last iterator was still being let go; one that grew at
/// every one of two or more keeps what each pass made. Calibrated on tests/watch/, whose clean
/// programs must give none: a plain loop over a loader without persistent workers, counted after
/// each pass, read 1, 1, 2, 1 pipes in one run (a queue feeder still closing its pipe).
constexpr long kMinBoundaries = 2;

constexpr FdType kTypes[] = {FdType::pipe, FdType::socket, FdType::anon_inode, FdType::file};

/// Why a type piles up, after the sentence's colon.
const char* cause(FdType type) {
  switch (type) {
    case FdType::pipe:
      return "an iterator that is not shut down keeps its queues, and a worker whose Process object is still "
             "referenced keeps its pipes (torch's atexit hook with persistent_workers and pin_memory, pytorch#91252)";
    case FdType::socket: return "each pass opens sockets that are not closed (a process group, a connection)";
    case FdType::anon_inode: return "each pass makes eventfds or epolls that are not closed";
    case FdType::file: return "each pass opens files that are not closed (a dataset's handles, a log)";
  }
  return "";
}

/// The passes of one process's loaders of one kind, in order.
struct Series {
  pid_t pid = 0;                     ///< The process whose descriptors were counted.
  const LoaderView* kind = nullptr;  ///< Its first loader; null where the hook named none.
  std::string key;                   ///< That loader's key ("L1"), or the unnamed one's ("").
  std::vector<std::size_t> passes;   ///< Indices into the view's passes.
};

std::vector<Series> series_of(const PythonView& python) {
  std::vector<Series> all;
  for (std::size_t p = 0; p < python.passes.size(); ++p) {
    const PassView& pass = python.passes[p];
    if (!python.events[pass.begin_event].fds) continue;
    const LoaderView* loader = python.loader(pass.pid, pass.loader);
    auto found = std::find_if(all.begin(), all.end(), [&](const Series& series) {
      if (series.pid != pass.pid) return false;
      if (loader == nullptr || series.kind == nullptr) return loader == series.kind && series.key == pass.loader;
      return loader->same_kind(*series.kind);
    });
    if (found == all.end()) found = all.insert(all.end(), Series{pass.pid, loader, pass.loader, {}});
    found->passes.push_back(p);
  }
  return all;
}

/// "13, 17, 21, 25".
std::string counts_words(const FdGrowth& growth) {
  std::string words;
  for (const auto& [event, count] : growth.samples) words += (words.empty() ? "" : ", ") + std::to_string(count);
  return words;
}

/// The type's growth over `series`, where it grew at every boundary after a pass that had ended
/// (a pass still running at the next one's start, as when several loaders start before any is
/// read, is no boundary): empty where it did not.
std::optional<FdGrowth> growth_of(const PythonView& python, const Series& series, FdType type) {
  FdGrowth growth;
  growth.pid = series.pid;
  growth.loader = series.key;
  growth.type = type;
  growth.least = -1;
  for (std::size_t i = 0; i < series.passes.size(); ++i) {
    const PassView& pass = python.passes[series.passes[i]];
    const long count = python.events[pass.begin_event].fds->of(type);
    growth.samples.emplace_back(pass.begin_event, count);
    if (i == 0) continue;
    const PassView& before = python.passes[series.passes[i - 1]];
    if (!before.end_event || *before.end_event > pass.begin_event) continue;
    const long grew = count - growth.samples[i - 1].second;
    if (grew <= 0) return std::nullopt;
    ++growth.passes_after_first;
    growth.growth += grew;
    growth.least = growth.least < 0 ? grew : std::min(growth.least, grew);
    growth.most = std::max(growth.most, grew);
  }
  if (growth.passes_after_first < kMinBoundaries) return std::nullopt;
  const std::string by =
      growth.least == growth.most ? std::to_string(growth.most) : fmt::format("{} to {}", growth.least, growth.most);
  std::set<std::string> loaders;
  for (const std::size_t p : series.passes) loaders.insert(python.passes[p].loader);
  std::string whose = series.kind != nullptr ? "of " + series.kind->identity()
                      : series.key.empty()   ? std::string("of loaders the hook did not name")
                                             : "of its loader " + series.key;
  if (loaders.size() > 1) whose += fmt::format(" and the {} loaders made like it", loaders.size() - 1);
  growth.sentence = fmt::format("{} grew by {} a pass in pid {}, at each of the {} passes {}, after the first ({}): {}",
                                plural_name(type), by, series.pid, growth.passes_after_first, whose,
                                counts_words(growth), cause(type));
  return growth;
}

/// Each process's growth: the sum over its types and kinds.
std::map<pid_t, long> growth_by_pid(const std::vector<FdGrowth>& found) {
  std::map<pid_t, long> by_pid;
  for (const FdGrowth& growth : found) by_pid[growth.pid] += growth.growth;
  return by_pid;
}

void find(const CheckInput& input, Check& check, Findings& findings) {
  for (const Series& series : series_of(input.python)) {
    for (const FdType type : kTypes) {
      if (std::optional<FdGrowth> growth = growth_of(input.python, series, type)) {
        findings.fd_growth.push_back(std::move(*growth));
      }
    }
  }
  // The most first: the verdict names it.
  std::stable_sort(findings.fd_growth.begin(), findings.fd_growth.end(),
                   [](const FdGrowth& a, const FdGrowth& b) { return a.growth > b.growth; });
  for (const FdGrowth& growth : findings.fd_growth) {
    check.details.push_back(growth.sentence);
    check.events.push_back(growth.samples.back().first);
  }
  for (const auto& [pid, growth] : growth_by_pid(findings.fd_growth)) check.count = std::max(check.count, growth);
}

std::string section(const WatchReport& /*report*/, const Check& check) {
  if (check.count == 0) return "";
  std::string text = fmt::format("  descriptors piled up: {} in one process over the job:\n", check.count);
  for (const std::string& detail : check.details) text += "    " + detail + "\n";
  return text;
}

std::string verdict(const WatchReport& /*report*/, const Check& check) {
  return "Descriptors piled up at every pass: " + check.details.front() + ".";
}

std::string gate_words(const WatchReport& report, const Check& check) {
  pid_t pid = 0;
  for (const auto& [each, growth] : growth_by_pid(report.findings.fd_growth)) {
    if (growth == check.count) pid = each;
  }
  return fmt::format("{} piled up in pid {}, growing at every pass", plural(check.count, "descriptor", "descriptors"),
                     pid);
}

}  // namespace

CheckSpec fd_growth_check() {
  return {{"fd_growth", "--max-fd-growth", kHelp}, {find, section, nullptr, verdict, gate_words}, true};
}

}  // namespace dlreset::watch
