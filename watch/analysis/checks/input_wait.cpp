// The input-wait checks: how much of its time the training loop spent waiting for data (inside
// next()), and how long the longest first batch of a pass took. Two rows, one measure: the first
// row's finder measures the waits into Findings::input_wait, the second reads them.
// docs/watch.md, "The input wait", defines the terms.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "watch/analysis/checks/checks.h"
#include "watch/analysis/input_wait.h"
#include "watch/analysis/wording.h"

namespace dlreset::watch {

namespace {

/// --max-input-wait's --help.
constexpr const char* kHelp =
    "Fail if the training loop waited for data (inside next() of its DataLoaders) more than this fraction of its "
    "time, over the whole job (0 to 1; needs the Python hook: a watch that could not see every pass fails)";
/// --max-first-batch-s's --help.
constexpr const char* kFirstBatchHelp =
    "Fail if the first batch of any pass (iter() to the first batch's return) took longer than this many seconds "
    "(needs the Python hook: a watch that could not see every pass fails)";

/// A loop that waits less than this share of its time is well fed: the summary says so in one
/// line. 5% is below what a profiler would flag, and above the timing noise of next() itself.
constexpr double kWellFed = 0.05;
/// A rank is an input straggler when it waited this much more of its time than every other rank
/// did, and at least kStragglerLeast: a gap of 15 points is far beyond the spread of ranks that
/// read the same loader (a few points), and below it the job's input is not what holds it back.
constexpr double kStragglerMargin = 0.15;
constexpr double kStragglerLeast = 0.20;

std::string percent(double fraction) { return fmt::format("{:.0f}%", 100.0 * fraction); }

/// A steady-state wait, "3.1 ms": in milliseconds always, where seconds() would round the usual
/// one, a few milliseconds, to "0.00 s", and one unit keeps the line's shape from run to run.
std::string wait_time(double value) { return fmt::format("{:.1f} ms", 1e3 * value); }

std::string incomplete_words(const InputWait& wait) {
  std::string words;
  for (const std::string& reason : wait.incomplete) words += (words.empty() ? "" : "; ") + reason;
  return words;
}

void find(const CheckInput& input, Check& check, Findings& findings) {
  findings.input_wait = analyse_input_wait(input.result.processes, input.generations, input.python);
  const InputWait& wait = findings.input_wait;
  check.count = static_cast<long>(wait.passes.size());
  if (!wait.incomplete.empty()) {
    check.seen = false;
    check.unseen_why = "the accounting of the input wait is incomplete: " + incomplete_words(wait);
  } else if (wait.passes.empty()) {
    check.seen = false;
    check.unseen_why = "the hook measured no pass of a DataLoader";
  }
  if (!wait.passes.empty()) check.measure = wait.job.fraction();
}

void find_first_batch(const CheckInput& /*input*/, Check& check, Findings& findings) {
  const InputWait& wait = findings.input_wait;  // measured by the input_wait row, before this one
  for (const PassWait& pass : wait.passes) check.count += pass.first_batch_s.has_value();
  const Check& measured = findings.check("input_wait");
  check.seen = measured.seen;
  check.unseen_why = measured.unseen_why;
  if (wait.longest_first_batch) check.measure = *wait.passes[*wait.longest_first_batch].first_batch_s;
}

/// "6.90 s at 3 epoch starts that started new workers (the respawns above), 0.50 s in steady
/// state": where the wait went, the parts that are not zero.
std::string parts(const WaitTotals& totals) {
  std::vector<std::string> said;
  if (totals.new_workers_s > 0.0) {
    const std::string respawns = totals.respawn_starts == 0                          ? ""
                                 : totals.respawn_starts == totals.new_worker_starts ? " (the respawns above)"
                                 : totals.respawn_starts == 1
                                     ? " (1 of them the respawn above)"
                                     : fmt::format(" ({} of them the respawns above)", totals.respawn_starts);
    said.push_back(fmt::format("{} at {} that started new workers{}", seconds(totals.new_workers_s),
                               plural(totals.new_worker_starts, "epoch start", "epoch starts"), respawns));
  }
  if (totals.workers_kept_s > 0.0) {
    said.push_back(fmt::format("{} at {} with the workers kept", seconds(totals.workers_kept_s),
                               plural(totals.kept_starts, "epoch start", "epoch starts")));
  }
  if (totals.no_workers_s > 0.0) said.push_back(seconds(totals.no_workers_s) + " at epoch starts without workers");
  if (totals.unknown_s > 0.0) said.push_back(seconds(totals.unknown_s) + " at epoch starts the hook did not see begin");
  said.push_back(seconds(totals.steady_s) + " in steady state");
  std::string text;
  for (const std::string& part : said) text += (text.empty() ? "" : ", ") + part;
  return text;
}

/// "waited 38% of its time for data (7.40 of 19.50 s): ...; first batch 2.30 s (median)".
std::string waited(const WaitTotals& totals) {
  const std::optional<double> median = totals.median_first_batch_s();
  const std::string first = median ? fmt::format("; first batch {} (median)", seconds(*median)) : "";
  const std::string time = fmt::format("waited {} of its time for data ({:.2f} of {:.2f} s)",
                                       percent(totals.fraction()), totals.wait_s, totals.wait_s + totals.step_s);
  if (totals.fraction() < kWellFed) return time + ": it was well fed" + first;
  return time + ": " + parts(totals) + first;
}

std::string loader_name(const WatchReport& report, pid_t pid, const std::string& key) {
  const LoaderView* loader = report.python.loader(pid, key);
  return loader != nullptr ? loader->short_name() : fmt::format("{} of pid {}", key, pid);
}

/// The passes of a loader that started new workers: their generations, start-up and the resets
/// that made them necessary.
std::string new_workers_line(const WatchReport& report, const LoaderWait& loader) {
  const InputWait& wait = report.findings.input_wait;
  std::vector<int> generations;
  std::vector<double> startups;
  std::vector<std::string> resets;
  for (const PassWait& pass : wait.passes) {
    if (pass.pid != loader.pid || (pass.loader.empty() ? pass.iterator : pass.loader) != loader.loader ||
        pass.cause != WaitCause::new_workers || pass.generation == 0) {
      continue;
    }
    generations.push_back(pass.generation);
    if (pass.startup_s) startups.push_back(*pass.startup_s);
    if (pass.reset_event) {
      const std::string frame = program_frame(report.python.events[*pass.reset_event].stack);
      if (std::find(resets.begin(), resets.end(), frame) == resets.end()) resets.push_back(frame);
    }
  }
  if (generations.empty()) return "";
  std::string list;
  for (const int generation : generations) list += (list.empty() ? "" : ", ") + std::to_string(generation);
  std::string line =
      fmt::format("    {}: {} new workers (generation{} {})", loader_name(report, loader.pid, loader.loader),
                  plural(static_cast<long>(generations.size()), "pass started", "passes started"),
                  generations.size() == 1 ? "" : "s", list);
  if (!startups.empty()) {
    std::sort(startups.begin(), startups.end());
    line += fmt::format(", start-up {} (median, fork to worker_ready)", seconds(startups[startups.size() / 2]));
  }
  std::string at;
  for (const std::string& frame : resets) at += (at.empty() ? "" : ", ") + frame;
  if (!at.empty()) line += ", made necessary by the reset at " + at;
  return line + "\n";
}

std::string gaps_line(const WatchReport& report, const LoaderWait& loader) {
  EpochGap sum;
  long gaps = 0;
  for (const PassWait& pass : report.findings.input_wait.passes) {
    if (pass.pid != loader.pid || (pass.loader.empty() ? pass.iterator : pass.loader) != loader.loader || !pass.gap) {
      continue;
    }
    ++gaps;
    sum.total_s += pass.gap->total_s;
    sum.shutdown_s += pass.gap->shutdown_s;
    sum.startup_s += pass.gap->startup_s;
    sum.first_fetch_s += pass.gap->first_fetch_s;
  }
  if (gaps == 0) return "";
  return fmt::format("    {}: {} between passes, {} in all: {} old workers' shutdown, {} new workers' start, {} "
                     "first fetch\n",
                     loader_name(report, loader.pid, loader.loader), plural(gaps, "epoch gap", "epoch gaps"),
                     seconds(sum.total_s), seconds(sum.shutdown_s), seconds(sum.startup_s), seconds(sum.first_fetch_s));
}

/// "head-of-line blocking: in 14 of 15 waits over 1 ms (0.70 s) the loop waited for one worker's
/// batch while later batches of other workers were ready; the longest: 52.3 ms for batch 5 of pass 2
/// of L1 (worker 0's), later batches ready: 2". Worded alike for any count, so that a docs excerpt
/// holds from run to run. Empty where no wait was blocked.
std::string blocked_line(const WatchReport& report, const WaitTotals& totals) {
  if (totals.blocked_waits == 0) return "";
  std::string line = fmt::format(
      "    head-of-line blocking: in {} of {} over 1 ms ({}) the loop waited for one worker's batch while later "
      "batches of other workers were ready",
      totals.blocked_waits, plural(totals.slow_waits(), "wait", "waits"), seconds(totals.blocked_wait_s));
  if (totals.worst_blocked) {
    const WorstBlocked& worst = *totals.worst_blocked;
    line += fmt::format("; the longest: {} for batch {} of pass {} of {}{}, later batches ready: {}",
                        wait_time(worst.wait.wait_s), worst.wait.batch, worst.pass,
                        loader_name(report, worst.pid, worst.loader),
                        worst.wait.worker ? fmt::format(" (worker {}'s)", *worst.wait.worker) : std::string(),
                        worst.wait.ready);
  }
  return line + "\n";
}

std::string rank_name(const ProcessWait& process) {
  return process.rank ? fmt::format("rank {} (pid {})", *process.rank, process.pid)
                      : fmt::format("pid {}", process.pid);
}

}  // namespace

std::string input_straggler(const InputWait& wait) {
  if (wait.processes.size() < 2) return "";
  const auto worst =
      std::max_element(wait.processes.begin(), wait.processes.end(), [](const ProcessWait& a, const ProcessWait& b) {
        return a.totals.fraction() < b.totals.fraction();
      });
  double low = 1.0;
  double high = 0.0;
  for (const ProcessWait& process : wait.processes) {
    if (&process == &*worst) continue;
    low = std::min(low, process.totals.fraction());
    high = std::max(high, process.totals.fraction());
  }
  const double fraction = worst->totals.fraction();
  if (fraction < kStragglerLeast || fraction - high < kStragglerMargin) return "";
  const std::string others =
      percent(low) == percent(high) ? percent(high) : fmt::format("{:.0f}-{:.0f}%", 100.0 * low, 100.0 * high);
  const std::string name = rank_name(*worst);
  return fmt::format("{} waited {} of its time, the other {} {}: {} is an input straggler", name, percent(fraction),
                     wait.processes.size() == 2 ? "rank" : "ranks", others, name);
}

namespace {

std::string section(const WatchReport& report, const Check& /*check*/) {
  const InputWait& wait = report.findings.input_wait;
  if (wait.passes.empty()) return "";
  std::string text = "  input wait: the training loop " + waited(wait.job) + "\n";
  if (wait.processes.size() > 1) {
    for (const ProcessWait& process : wait.processes)
      text += "    " + rank_name(process) + " " + waited(process.totals) + "\n";
    if (const std::string verdict = input_straggler(wait); !verdict.empty()) text += "    " + verdict + "\n";
  }
  const bool several = wait.loaders.size() > 1;
  for (const LoaderWait& loader : wait.loaders) {
    if (several) text += "    " + loader_name(report, loader.pid, loader.loader) + " " + waited(loader.totals) + "\n";
    for (const std::string& thread : loader.threads) {
      text += fmt::format("    {} was read on thread '{}', not the main thread\n",
                          loader_name(report, loader.pid, loader.loader), thread);
    }
    if (wait.job.fraction() < kWellFed) continue;
    text += new_workers_line(report, loader);
    text += gaps_line(report, loader);
  }
  if (wait.job.fraction() >= kWellFed) {
    const WaitTotals& job = wait.job;
    if (const std::optional<double> p50 = job.steady_quantile_s(0.5)) {
      long waits = 0;
      for (const long count : job.hist) waits += count;
      text += fmt::format("    steady state: {}, p50 under {}, p99 under {}, longest {}\n",
                          plural(waits, "wait", "waits"), wait_time(*p50), wait_time(*job.steady_quantile_s(0.99)),
                          wait_time(job.max_steady_s.value_or(0.0)));
    }
  }
  text += blocked_line(report, wait.job);
  if (wait.longest_first_batch) {
    const PassWait& longest = wait.passes[*wait.longest_first_batch];
    if (wait.job.fraction() >= kWellFed) {
      text +=
          fmt::format("    longest first batch: {}, pass {} of {}\n", seconds(*longest.first_batch_s), longest.number,
                      loader_name(report, longest.pid, longest.loader.empty() ? longest.iterator : longest.loader));
    }
  }
  if (!wait.incomplete.empty()) text += "    the accounting is incomplete: " + incomplete_words(wait) + "\n";
  return text;
}

std::string gate_words(const WatchReport& report, const Check& check) {
  const WaitTotals& job = report.findings.input_wait.job;
  return fmt::format("the training loop waited {:.2f} of its time for data ({}, {:.2f} of {:.2f} s)",
                     check.measure.value_or(0.0), percent(job.fraction()), job.wait_s, job.wait_s + job.step_s);
}

std::string first_batch_words(const WatchReport& report, const Check& check) {
  const InputWait& wait = report.findings.input_wait;
  if (!wait.longest_first_batch) return "no first batch was measured";
  const PassWait& longest = wait.passes[*wait.longest_first_batch];
  return fmt::format("the longest first batch took {:.2f} s (pass {} of {})", check.measure.value_or(0.0),
                     longest.number,
                     loader_name(report, longest.pid, longest.loader.empty() ? longest.iterator : longest.loader));
}

}  // namespace

CheckSpec input_wait_check() {
  return {{"input_wait", "--max-input-wait", kHelp, nullptr, nullptr, nullptr, GateLimit::fraction},
          {find, section, nullptr, nullptr, gate_words},
          true};
}

CheckSpec first_batch_s_check() {
  return {{"first_batch_s", "--max-first-batch-s", kFirstBatchHelp, nullptr, nullptr, nullptr, GateLimit::seconds},
          {find_first_batch, nullptr, nullptr, nullptr, first_batch_words},
          true};
}

}  // namespace dlreset::watch
