#include "app/distributed_run.h"

#include <ATen/ops/full.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "app/fashion_fit.h"
#include "app/line_prefix_buffer.h"
#include "app/rank_launcher.h"
#include "app/run_output.h"
#include "app/run_report.h"
#include "harness/data/core/errors.h"
#include "harness/data/core/interrupt.h"
#include "harness/distributed/process_group.h"

namespace dlreset::app {

namespace {

/// The counts of each loader that the totals sum over the ranks.
constexpr const char* kLoaders[] = {"train", "val"};
constexpr const char* kCounts[] = {"worker_spawns",         "shutdown_calls",    "iterator_resets_during_fit",
                                   "iterator_resets_total", "iterators_created", "dataset_loads"};

std::string joined(const std::vector<std::string>& sentences) {
  std::string text;
  for (const std::string& sentence : sentences) text += (text.empty() ? "" : "; ") + sentence;
  return text;
}

extern "C" void on_rank_zero_death(int signal_number) { data::request_interrupt(signal_number); }

/// While alive, kRankZeroDeathSignal asks the loader to stop, however often it comes (the
/// kernel may send it once per thread of the dying rank 0); the previous handling after.
class RankZeroDeathHandler {
 public:
  RankZeroDeathHandler() {
    struct sigaction action {};
    action.sa_handler = &on_rank_zero_death;
    sigemptyset(&action.sa_mask);
    ::sigaction(kRankZeroDeathSignal, &action, &previous_);
  }
  ~RankZeroDeathHandler() { ::sigaction(kRankZeroDeathSignal, &previous_, nullptr); }
  RankZeroDeathHandler(const RankZeroDeathHandler&) = delete;
  RankZeroDeathHandler& operator=(const RankZeroDeathHandler&) = delete;

 private:
  struct sigaction previous_ {};
};

/// Restores the event log's trace options when the rank's prefixed stream goes away.
class TraceOptionsScope {
 public:
  explicit TraceOptionsScope(trace::TraceOptions options) : previous_(trace::EventLog::global().trace_options()) {
    trace::EventLog::global().set_trace_options(std::move(options));
  }
  ~TraceOptionsScope() { trace::EventLog::global().set_trace_options(previous_); }
  TraceOptionsScope(const TraceOptionsScope&) = delete;
  TraceOptionsScope& operator=(const TraceOptionsScope&) = delete;

 private:
  trace::TraceOptions previous_;
};

/// What a rank knows of the other processes of its job, to name them in its errors: on rank 0
/// of --ranks, the ranks it started (and which of them died); on a rank that rank 0 started,
/// whether rank 0 itself is gone.
class JobPeers {
 public:
  explicit JobPeers(const RunOptions& options)
      : options_(options), job_(*options.rendezvous), rank_zero_pid_(std::getenv(kRankZeroPidVariable)) {
    if (rank_zero_pid_ != nullptr) rank_zero_death_.emplace();
  }
  JobPeers(const JobPeers&) = delete;
  JobPeers& operator=(const JobPeers&) = delete;

  /// Joins the job's process group; rank 0 of --ranks starts the other ranks once its store
  /// listens. The group refers to this object, which must outlive it.
  std::unique_ptr<distributed::ProcessGroup> form_group() {
    // A rank that died before reaching the store will never come: no need to wait out the
    // timeout to say so. Only a launcher can see it die.
    distributed::ProcessGroup::WhileWaiting while_waiting;
    if (options_.launch_ranks) {
      while_waiting = [this](std::chrono::milliseconds interval) {
        if (launcher_ && !launcher_->failed_ranks(interval).empty()) {
          throw distributed::DistError("Rank 0 of " + std::to_string(job_.world_size) +
                                       " stopped waiting for the other ranks to reach its store.");
        }
      };
    }
    try {
      return std::make_unique<distributed::ProcessGroup>(
          job_, [this](int port) { launch_ranks(port); }, while_waiting);
    } catch (const distributed::DistError& error) {
      throw with_failed_ranks(error);
    }
  }

  /// `error`, preceded by the ranks that had ended by then, when any had.
  distributed::DistError with_failed_ranks(const distributed::DistError& error) {
    // A closed connection means a rank is ending, and ending can take seconds (its workers'
    // shutdown grace, a sanitizer's exit report): wait for its status, up to the timeout, so
    // the error can name it. After a timeout, a rank still running is not ending; one more
    // second only catches one that ended at the same moment.
    const std::chrono::milliseconds grace =
        error.cause() == distributed::DistError::Cause::peer_closed ? job_.timeout : std::chrono::milliseconds(1000);
    std::vector<std::string> failed = launcher_ ? launcher_->failed_ranks(grace) : std::vector<std::string>{};
    if (rank_zero_gone()) failed.push_back(std::string("rank 0 (pid ") + rank_zero_pid_ + ") has ended");
    if (failed.empty()) return distributed::DistError(error.what());
    return distributed::DistError(joined(failed) + ", so the job stopped. " + error.what());
  }

  /// On a rank that rank 0 started: whether rank 0 has ended (this rank has a new parent).
  bool rank_zero_gone() const { return rank_zero_pid_ != nullptr && std::to_string(::getppid()) != rank_zero_pid_; }
  const char* rank_zero_pid() const { return rank_zero_pid_; }

  /// On rank 0 of --ranks: waits for the ranks it started to end; throws naming any that failed.
  void wait_for_ranks() {
    if (!launcher_) return;
    const std::vector<std::string> failed = launcher_->wait(job_.timeout);
    if (!failed.empty()) throw distributed::DistError(joined(failed) + " after sending its report.");
  }

 private:
  void launch_ranks(int port) {
    if (!options_.launch_ranks) return;
    RankLauncherOptions ranks;
    ranks.world_size = job_.world_size;
    ranks.master_addr = job_.master_addr;
    ranks.master_port = port;
    ranks.argv = options_.argv;
    launcher_ = std::make_unique<RankLauncher>(std::move(ranks));
  }

  const RunOptions& options_;
  const distributed::Rendezvous& job_;
  std::unique_ptr<RankLauncher> launcher_;
  const char* rank_zero_pid_;
  std::optional<RankZeroDeathHandler> rank_zero_death_;
};

/// Fits this rank's DistributedSampler shard, averaging the gradients every step and the
/// validation loss every epoch over `group`. An error names the ranks behind it.
FashionFit fit_rank(const RunOptions& options, JobPeers& peers, distributed::ProcessGroup& group, FitHooks hooks) {
  const distributed::Rendezvous& job = *options.rendezvous;
  hooks.distributed = lightning::DistributedSamplerKwargs{job.world_size, job.rank, options.seed};
  hooks.all_reduce_gradients = [&group](at::Tensor& flat) {
    std::vector<at::Tensor> tensors{flat};
    group.all_reduce_mean(tensors);
  };
  hooks.reduce_mean = [&group](double value) {
    std::vector<at::Tensor> tensors{at::full({1}, value, at::kDouble)};
    group.all_reduce_mean(tensors);
    return tensors[0].item<double>();
  };
  try {
    return fit_fashion_mnist(options, hooks);
  } catch (const distributed::DistError& error) {
    throw peers.with_failed_ranks(error);
  } catch (const data::InterruptedError&) {
    // kRankZeroDeathSignal (or a signal of the user's): say why before the line about it.
    if (peers.rank_zero_gone()) {
      std::cerr << "dlreset: rank " << job.rank << ": rank 0 (pid " << peers.rank_zero_pid() << ") has ended.\n";
    }
    throw;
  }
}

/// This rank's report and events as one text for rank 0's gather, each marked with the rank,
/// the events with their clock's origin so that rank 0 can put them on its own.
std::string rank_reports(const FashionFit& fit, const RunContext& context, int rank) {
  nlohmann::json report = to_json(fit.report, context);
  report["rank"] = rank;
  nlohmann::json events = events_to_json(fit.report, context);
  events["rank"] = rank;
  events["origin_s"] = fit.report.origin_s;
  return nlohmann::json{{"report", report}, {"events", events}}.dump();
}

/// Rank 0's end of the job: once the ranks it started have ended well, writes the job's reports
/// from every rank's (`gathered`) and prints its own summary (`rank_zero_summary`), then the
/// table of every rank.
void report_job(const RunOptions& options, const std::vector<std::string>& gathered, JobPeers& peers, RunOutput& output,
                const std::function<std::string()>& rank_zero_summary) {
  std::vector<nlohmann::json> reports;
  std::vector<nlohmann::json> rank_events;
  for (const std::string& text : gathered) {
    nlohmann::json one = nlohmann::json::parse(text);
    reports.push_back(std::move(one["report"]));
    rank_events.push_back(std::move(one["events"]));
  }
  peers.wait_for_ranks();
  const nlohmann::json whole_job = job_json(reports);
  output.report([&] { return whole_job; }, [&] { return job_events_json(rank_events); },
                [&] {
                  return "\nrank 0 of " + std::to_string(options.rendezvous->world_size) + ":\n" + rank_zero_summary() +
                         "\nevery rank:\n" + ranks_table(whole_job);
                });
}

}  // namespace

void resolve_job(RunOptions& options, bool ranks_given, const distributed::GetEnv& getenv) {
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(options.dist_timeout_s * 1000.0));
  options.rendezvous.reset();
  options.launch_ranks = false;
  std::optional<distributed::Rendezvous> from_environment = distributed::env_rendezvous(getenv);
  if (from_environment) {
    if (ranks_given && options.ranks != from_environment->world_size) {
      throw distributed::DistError("--ranks " + std::to_string(options.ranks) +
                                   " disagrees with WORLD_SIZE=" + std::to_string(from_environment->world_size) +
                                   " in the environment; drop --ranks where a launcher sets WORLD_SIZE, or give "
                                   "the same number.");
    }
    from_environment->timeout = timeout;
    distributed::check_rendezvous(*from_environment);
    if (from_environment->world_size > 1) options.rendezvous = from_environment;
    return;
  }
  if (options.ranks <= 1) return;
  distributed::Rendezvous job;
  job.world_size = options.ranks;
  job.master_addr = options.master_addr;
  job.master_port = options.master_port;
  job.timeout = timeout;
  distributed::check_rendezvous(job);
  options.rendezvous = job;
  options.launch_ranks = true;
}

int run_rank(const RunOptions& options) {
  // A write to a rank that died would otherwise kill this one with SIGPIPE, silently, before any
  // error could name the rank. Python ignores SIGPIPE from its start, so a torch rank sees the
  // broken pipe as an error; so does this one (Gloo and the store then raise it).
  ::signal(SIGPIPE, SIG_IGN);
  const distributed::Rendezvous& job = *options.rendezvous;
  LinePrefixBuffer prefixed(std::cerr.rdbuf(), "[rank " + std::to_string(job.rank) + "] ");
  std::ostream rank_stderr(&prefixed);
  std::optional<TraceOptionsScope> tracing;
  if (options.trace_resets) tracing.emplace(traceback_options(rank_stderr));

  // Declared before the group, so that the group goes first and the ranks are stopped after.
  JobPeers peers(options);
  const std::unique_ptr<distributed::ProcessGroup> group = peers.form_group();
  RunOutput output(options, /*shows=*/job.rank == 0);
  const std::string workers =
      fmt::format("{} ranks × {} worker{}", job.world_size, options.workers, options.workers == 1 ? "" : "s");
  const FashionFit fit = fit_rank(options, peers, *group, output.hooks(workers));

  const RunContext context{&options, fit.device, fit.parameter_digests};
  const std::vector<std::string> gathered = group->gather_object(rank_reports(fit, context, job.rank));
  if (job.rank != 0) return 0;
  report_job(options, gathered, peers, output, [&] { return summary_table(fit.report, context); });
  return 0;
}

nlohmann::json job_json(const std::vector<nlohmann::json>& rank_reports) {
  nlohmann::json job = rank_reports.at(0);
  job["world_size"] = rank_reports.size();
  job["ranks"] = rank_reports;
  nlohmann::json totals;
  for (const char* loader : kLoaders) {
    for (const char* count : kCounts) {
      std::int64_t sum = 0;
      for (const nlohmann::json& rank : rank_reports) sum += rank[loader][count].get<std::int64_t>();
      totals[loader][count] = sum;
    }
  }
  job["totals"] = totals;
  return job;
}

nlohmann::json job_events_json(const std::vector<nlohmann::json>& rank_events) {
  nlohmann::json job = rank_events.at(0);
  const double origin_s = job["origin_s"].get<double>();
  nlohmann::json events = nlohmann::json::array();
  for (const nlohmann::json& rank : rank_events) {
    const double shift = rank["origin_s"].get<double>() - origin_s;
    for (nlohmann::json event : rank["events"]) {
      event["rank"] = rank["rank"];
      event["t"] = event["t"].get<double>() + shift;
      events.push_back(std::move(event));
    }
  }
  job["events"] = events;
  job["world_size"] = rank_events.size();
  job.erase("rank");
  return job;
}

std::string ranks_table(const nlohmann::json& job) {
  std::string out = fmt::format("{:>5}  {:<6}  {:>13}  {:>28}  {:>13}\n", "rank", "loader", "worker spawns",
                                "iterator resets fit+teardown", "dataset loads");
  const auto row = [&](const std::string& rank, const char* loader, const nlohmann::json& counts) {
    const std::int64_t total = counts["iterator_resets_total"].get<std::int64_t>();
    const std::int64_t during_fit = counts["iterator_resets_during_fit"].get<std::int64_t>();
    out +=
        fmt::format("{:>5}  {:<6}  {:>13}  {:>28}  {:>13}\n", rank, loader, counts["worker_spawns"].get<std::int64_t>(),
                    fmt::format("{} + {}", during_fit, total - during_fit),
                    counts["dataset_loads"].get<std::int64_t>());
  };
  for (const nlohmann::json& rank : job["ranks"]) {
    for (const char* loader : kLoaders) row(std::to_string(rank["rank"].get<int>()), loader, rank[loader]);
  }
  for (const char* loader : kLoaders) row("all", loader, job["totals"][loader]);
  return out;
}

}  // namespace dlreset::app
