#include "app/distributed_run.h"

#include <ATen/ops/full.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "app/fashion_fit.h"
#include "app/line_prefix_buffer.h"
#include "app/progress_bar.h"
#include "app/rank_launcher.h"
#include "app/run_report.h"
#include "harness/data/core/errors.h"
#include "harness/data/core/interrupt.h"
#include "harness/distributed/process_group.h"
#include "harness/profiler/simple_profiler.h"

namespace dlreset::app {

namespace {

/// The counts of each loader that the totals sum over the ranks.
constexpr const char* kLoaders[] = {"train", "val"};
constexpr const char* kCounts[] = {"worker_spawns", "shutdown_calls", "iterator_resets_during_fit",
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

}  // namespace

void resolve_job(RunOptions& options, bool ranks_given, const dist::GetEnv& getenv) {
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(options.dist_timeout_s * 1000.0));
  options.rendezvous.reset();
  options.launch_ranks = false;
  std::optional<dist::Rendezvous> from_environment = dist::env_rendezvous(getenv);
  if (from_environment) {
    if (ranks_given && options.ranks != from_environment->world_size) {
      throw dist::DistError("--ranks " + std::to_string(options.ranks) + " disagrees with WORLD_SIZE=" +
                            std::to_string(from_environment->world_size) +
                            " in the environment; drop --ranks where a launcher sets WORLD_SIZE, or give "
                            "the same number.");
    }
    from_environment->timeout = timeout;
    dist::check_rendezvous(*from_environment);
    if (from_environment->world_size > 1) options.rendezvous = from_environment;
    return;
  }
  if (options.ranks <= 1) return;
  dist::Rendezvous job;
  job.world_size = options.ranks;
  job.master_addr = options.master_addr;
  job.master_port = options.master_port;
  job.timeout = timeout;
  dist::check_rendezvous(job);
  options.rendezvous = job;
  options.launch_ranks = true;
}

int run_rank(const RunOptions& options) {
  // A write to a rank that died would otherwise kill this one with SIGPIPE, silently, before any
  // error could name the rank. Python ignores SIGPIPE from its start, so a torch rank sees the
  // broken pipe as an error; so does this one (Gloo and the store then raise it).
  ::signal(SIGPIPE, SIG_IGN);
  const dist::Rendezvous& job = *options.rendezvous;
  const bool rank_zero = job.rank == 0;
  LinePrefixBuffer prefixed(std::cerr.rdbuf(), "[rank " + std::to_string(job.rank) + "] ");
  std::ostream rank_stderr(&prefixed);
  std::optional<TraceOptionsScope> tracing;
  if (options.trace_resets) tracing.emplace(traceback_options(rank_stderr));

  // Declared before the group, so that the group goes first and the ranks are stopped after.
  std::unique_ptr<RankLauncher> launcher;
  // What a rank adds to an error of its own: on rank 0, the ranks that had died by then; on a
  // rank that rank 0 started, whether rank 0 itself is gone.
  const char* rank_zero_pid = std::getenv(kRankZeroPidVariable);
  std::optional<RankZeroDeathHandler> rank_zero_death;
  if (rank_zero_pid != nullptr) rank_zero_death.emplace();
  const auto with_failed_ranks = [&](const dist::DistError& error) {
    // A closed connection means a rank is ending, and ending can take seconds (its workers'
    // shutdown grace, a sanitizer's exit report): wait for its status, up to the timeout, so
    // the error can name it. After a timeout, a rank still running is not ending; one more
    // second only catches one that ended at the same moment.
    const std::chrono::milliseconds grace =
        error.cause() == dist::DistError::Cause::kPeerClosed ? job.timeout : std::chrono::milliseconds(1000);
    std::vector<std::string> failed = launcher ? launcher->failed_ranks(grace) : std::vector<std::string>{};
    if (rank_zero_pid != nullptr && std::to_string(::getppid()) != rank_zero_pid) {
      failed.push_back(std::string("rank 0 (pid ") + rank_zero_pid + ") has ended");
    }
    if (failed.empty()) return dist::DistError(error.what());
    return dist::DistError(joined(failed) + ", so the job stopped. " + error.what());
  };
  // A rank that died before reaching the store will never come: no need to wait out the
  // timeout to say so. Only a launcher can see it die.
  dist::ProcessGroup::WhileWaiting while_waiting;
  if (options.launch_ranks) {
    while_waiting = [&](std::chrono::milliseconds interval) {
      if (launcher && !launcher->failed_ranks(interval).empty()) {
        throw dist::DistError("Rank 0 of " + std::to_string(job.world_size) +
                              " stopped waiting for the other ranks to reach its store.");
      }
    };
  }
  std::unique_ptr<dist::ProcessGroup> group;
  try {
    group = std::make_unique<dist::ProcessGroup>(job, [&](int port) {
      if (!options.launch_ranks) return;
      RankLauncherOptions ranks;
      ranks.world_size = job.world_size;
      ranks.master_addr = job.master_addr;
      ranks.master_port = port;
      ranks.argv = options.argv;
      launcher = std::make_unique<RankLauncher>(std::move(ranks));
    }, while_waiting);
  } catch (const dist::DistError& error) {
    throw with_failed_ranks(error);
  }

  const bool json_to_stdout = options.json_path == "-" || options.events_path == "-";
  profiler::SimpleProfiler simple_profiler;
  ProgressBar progress_bar;
  FitHooks hooks;
  if (options.profiler) hooks.profiler = &simple_profiler;
  if (rank_zero && options.progress && ::isatty(STDERR_FILENO)) hooks.callbacks.push_back(&progress_bar);
  hooks.on_ready = [&](const std::string& device) {
    if (!rank_zero || json_to_stdout) return;
    std::cout << "dlreset run: " << variants::to_string(options.variant) << ", " << job.world_size << " ranks × "
              << options.workers << (options.workers == 1 ? " worker (" : " workers (") << data::to_string(options.start_method) << ", "
              << (options.persistent_workers ? "persistent" : "not persistent") << "), " << options.epochs
              << " epochs on " << device << std::endl;
  };
  hooks.distributed = loops::DistributedSamplerKwargs{job.world_size, job.rank, options.seed};
  hooks.all_reduce_gradients = [&](at::Tensor& flat) {
    std::vector<at::Tensor> tensors{flat};
    group->all_reduce_mean(tensors);
  };
  hooks.reduce_mean = [&](double value) {
    std::vector<at::Tensor> tensors{at::full({1}, value, at::kDouble)};
    group->all_reduce_mean(tensors);
    return tensors[0].item<double>();
  };
  FashionFit fit;
  try {
    fit = fit_fashion_mnist(options, hooks);
  } catch (const dist::DistError& error) {
    throw with_failed_ranks(error);
  } catch (const data::InterruptedError&) {
    // kRankZeroDeathSignal (or a signal of the user's): say why before the line about it.
    if (rank_zero_pid != nullptr && std::to_string(::getppid()) != rank_zero_pid) {
      std::cerr << "dlreset: rank " << job.rank << ": rank 0 (pid " << rank_zero_pid << ") has ended.\n";
    }
    throw;
  }

  const RunContext context{&options, fit.device, fit.parameter_digests};
  nlohmann::json report = to_json(fit.report, context);
  report["rank"] = job.rank;
  nlohmann::json events = events_to_json(fit.report, context);
  events["rank"] = job.rank;
  events["origin_s"] = fit.report.origin_s;
  const std::vector<std::string> gathered =
      group->gather_object(nlohmann::json{{"report", report}, {"events", events}}.dump());
  if (!rank_zero) return 0;

  std::vector<nlohmann::json> reports;
  std::vector<nlohmann::json> rank_events;
  for (const std::string& text : gathered) {
    nlohmann::json one = nlohmann::json::parse(text);
    reports.push_back(std::move(one["report"]));
    rank_events.push_back(std::move(one["events"]));
  }
  if (launcher) {
    const std::vector<std::string> failed = launcher->wait(job.timeout);
    if (!failed.empty()) throw dist::DistError(joined(failed) + " after sending its report.");
  }
  const nlohmann::json whole_job = job_json(reports);
  if (!options.json_path.empty()) write_json(options.json_path, whole_job);
  if (!options.events_path.empty()) write_json(options.events_path, job_events_json(rank_events));
  if (!json_to_stdout) {
    std::cout << "\nrank 0 of " << job.world_size << ":\n"
              << summary_table(fit.report, context) << "\nevery rank:\n"
              << ranks_table(whole_job);
    if (options.profiler) std::cout << "\n" << simple_profiler.summary();
    std::cout.flush();
  }
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
    out += fmt::format("{:>5}  {:<6}  {:>13}  {:>28}  {:>13}\n", rank, loader,
                       counts["worker_spawns"].get<std::int64_t>(),
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
