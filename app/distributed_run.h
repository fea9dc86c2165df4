// `dlreset run` as one rank of a multi-rank job: torchrun's launch plus a DDP training script.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "app/run_options.h"
#include "harness/distributed/rendezvous.h"

namespace dlreset::app {

/// Sets `options.rendezvous` to the job this process belongs to: from RANK, WORLD_SIZE,
/// MASTER_ADDR and MASTER_PORT when a launcher (or rank 0 of --ranks) set them, else from
/// --ranks, --master-addr and --master-port (and then `launch_ranks`: this process is rank 0
/// and starts the others); left empty for a single process, a job of one rank included.
/// `ranks_given` says whether --ranks was on the command line. Throws distributed::DistError, naming
/// the values and the fix, for a partial or malformed environment and for a --ranks that
/// disagrees with WORLD_SIZE.
void resolve_job(RunOptions& options, bool ranks_given, const distributed::GetEnv& getenv);

/// Fits as rank `options.rendezvous->rank`: forms the process group (rank 0 of --ranks starts
/// the other ranks once its store listens), trains on this rank's DistributedSampler shard,
/// averages the gradients every step and the validation loss every epoch. Rank 0 gathers every
/// rank's report and alone prints the summary and writes --json and --events; the others print
/// nothing but errors and, with --trace-resets, their tracebacks marked "[rank N]". Returns the
/// exit status: non-zero when any rank failed, naming it.
int run_rank(const RunOptions& options);

/// Rank 0's JSON report of the job: rank 0's own report, with `world_size`, every rank's report
/// under `ranks` (each with its `rank`) and the loaders' counts summed under `totals`.
nlohmann::json job_json(const std::vector<nlohmann::json>& rank_reports);
/// Every rank's events in one timeline: each event gets its `rank`, and times are moved onto
/// rank 0's origin (`origin_s`, a monotonic clock that all processes of one machine share).
/// Rank by rank, each in its own file order, which pairs a worker's events causally (a forked
/// worker's start can read the clock before its parent records the spawn).
nlohmann::json job_events_json(const std::vector<nlohmann::json>& rank_events);
/// The per-rank loader table that follows rank 0's summary.
std::string ranks_table(const nlohmann::json& job);

}  // namespace dlreset::app
