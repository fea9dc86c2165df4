#include "app/run_report.h"

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/trace/reset_trace.h"
#include "harness/trace/stack_trace.h"
#include "variants/data_time.h"
#include "variants/epoch_gap.h"

namespace dlreset::app {

namespace {

/// Each JSON output names what it is and its version, so a reader (the plot scripts) can refuse
/// one it does not understand instead of misreading it. docs/run-json.md describes both.
constexpr const char* kRunSchema = "dlreset.run";
constexpr const char* kEventsSchema = "dlreset.events";
/// 2: where the time went while the fit consumed its loaders: data_time and its kin, and the
/// epoch gaps between a loader's passes (added before any release wrote 2).
constexpr int kRunSchemaVersion = 2;
constexpr int kEventsSchemaVersion = 1;

const char* to_string(data::PassStart start) {
  return start == data::PassStart::new_workers ? "new_workers" : "workers_kept";
}

nlohmann::json gap_json(const std::optional<variants::EpochGap>& gap) {
  if (!gap) return nullptr;
  return {{"total_s", gap->total_s},
          {"shutdown_s", gap->shutdown_s},
          {"startup_s", gap->startup_s},
          {"first_fetch_s", gap->first_fetch_s}};
}

nlohmann::json passes_json(const variants::LoaderReport& loader) {
  nlohmann::json json = nlohmann::json::array();
  for (std::size_t p = 0; p < loader.passes.size(); ++p) {
    const data::PassTimes& pass = loader.passes[p];
    json.push_back({{"start", to_string(pass.start)},
                    {"iter_s", pass.iter_s},
                    {"first_batch_s", pass.first_batch_s},
                    {"wait_s", pass.wait_s},
                    {"wait_at_start_s", pass.wait_at_start_s},
                    {"step_s", pass.step_s},
                    {"batches", pass.batches},
                    {"next_calls", pass.next_calls},
                    {"steps", pass.steps},
                    {"gap", gap_json(p < loader.gaps.size() ? loader.gaps[p] : std::nullopt)}});
  }
  return json;
}

nlohmann::json epoch_gaps_json(const variants::EpochGaps& gaps) {
  return {{"gaps", gaps.gaps},
          {"gaps_starting_workers", gaps.gaps_starting_workers},
          {"gaps_with_shutdown", gaps.gaps_with_shutdown},
          {"total_s", gaps.total_s},
          {"shutdown_s", gaps.shutdown_s},
          {"startup_s", gaps.startup_s},
          {"first_fetch_s", gaps.first_fetch_s}};
}

/// "  train: 2 epoch gaps between passes, 0.28 s in all: 0.01 s old workers' shutdown, 0.18 s new
/// workers' start, 0.10 s first fetch", in `dlreset watch`'s words; empty for a loader without
/// a gap.
std::string epoch_gaps_line(const char* name, const variants::LoaderReport& loader) {
  const variants::EpochGaps gaps = variants::sum_epoch_gaps(loader.passes, loader.gaps);
  if (gaps.gaps == 0) return "";
  return fmt::format(
      "  {}: {} epoch gap{} between passes, {:.2f} s in all: {:.2f} s old workers' shutdown, {:.2f} s new "
      "workers' start, {:.2f} s first fetch\n",
      name, gaps.gaps, gaps.gaps == 1 ? "" : "s", gaps.total_s, gaps.shutdown_s, gaps.startup_s, gaps.first_fetch_s);
}

nlohmann::json data_time_json(const variants::DataTime& time) {
  return {{"wait_s", time.wait_s},
          {"step_s", time.step_s},
          {"wait_fraction", time.wait_fraction()},
          {"wait_at_start_new_workers_s", time.wait_at_start_new_workers_s},
          {"wait_at_start_workers_kept_s", time.wait_at_start_workers_kept_s},
          {"wait_steady_s", time.wait_steady_s},
          {"iter_s", time.iter_s},
          {"passes", time.passes},
          {"starts_new_workers", time.starts_new_workers},
          {"starts_workers_kept", time.starts_workers_kept},
          {"batches", time.batches},
          {"first_batch_median_s", time.median_first_batch_s()}};
}

/// "waited for data 62% of the time: 9.1 s at 5 starts that started new workers, 0.4 s in
/// steady state; first batch 1.8 s (median)": the causes that took any time, in that order.
std::string data_time_sentence(const variants::DataTime& time, int workers) {
  std::string out = fmt::format("waited for data {:.0f}% of the time:", 100.0 * time.wait_fraction());
  if (time.starts_new_workers > 0) {
    out += fmt::format(" {:.1f} s at {} start{} that started new workers,", time.wait_at_start_new_workers_s,
                       time.starts_new_workers, time.starts_new_workers == 1 ? "" : "s");
  }
  if (time.starts_workers_kept > 0) {
    out += fmt::format(" {:.1f} s at {} start{} that {},", time.wait_at_start_workers_kept_s, time.starts_workers_kept,
                       time.starts_workers_kept == 1 ? "" : "s", workers > 0 ? "kept their workers" : "started none");
  }
  out += fmt::format(" {:.1f} s in steady state; first batch {:.2f} s (median)", time.wait_steady_s,
                     time.median_first_batch_s());
  return out;
}

nlohmann::json loader_json(const variants::LoaderReport& loader) {
  return {{"worker_spawns", loader.counters.worker_spawns},
          {"shutdown_calls", loader.counters.shutdown_calls},
          {"iterator_resets_during_fit", loader.resets_during_fit},
          {"iterator_resets_total", loader.counters.iterator_resets},
          {"iterators_created", loader.counters.iterators_created},
          {"dataset_loads", loader.counters.dataset_loads},
          {"passes", passes_json(loader)},
          {"epoch_gaps", epoch_gaps_json(variants::sum_epoch_gaps(loader.passes, loader.gaps))}};
}

/// Function names of the project frames, innermost first, without the hook's own frames.
nlohmann::json frames_json(const trace::Event& event) {
  nlohmann::json frames = nlohmann::json::array();
  if (!event.stack) return frames;
  bool in_hook = true;
  for (const trace::StackFrame& frame : event.stack->frames()) {
    if (in_hook) {
      bool hook = false;
      for (const char* const* name = trace::kResetHookFrames; *name != nullptr; ++name) {
        hook = hook || frame.function.find(*name) != std::string::npos;
      }
      if (hook) continue;
      in_hook = false;
    }
    if (frame.is_project_frame()) frames.push_back(trace::short_function_name(frame.function));
  }
  return frames;
}

}  // namespace

nlohmann::json events_to_json(const variants::FitReport& report, const RunContext& context) {
  const double origin_s = report.origin_s;
  nlohmann::json events = nlohmann::json::array();
  for (const trace::Event& event : report.events) {
    nlohmann::json entry = {{"kind", trace::to_string(event.kind)},
                            {"t", event.time_s - origin_s},
                            {"loader", event.loader},
                            {"epoch", event.epoch},
                            {"phase", event.phase},
                            {"stage", event.stage}};
    if (event.worker_id >= 0) entry["worker"] = event.worker_id;
    if (event.pid > 0) entry["pid"] = event.pid;
    if (event.kind == trace::EventKind::dataset_loaded) entry["duration_s"] = event.duration_s;
    events.push_back(std::move(entry));
  }
  nlohmann::json epochs = nlohmann::json::array();
  for (std::size_t e = 0; e < report.epochs.size(); ++e) {
    epochs.push_back({{"epoch", e},
                      {"start", report.epochs[e].start_s - origin_s},
                      {"end", report.epochs[e].end_s - origin_s}});
  }
  const RunOptions& options = *context.options;
  return {{"schema", kEventsSchema},
          {"schema_version", kEventsSchemaVersion},
          {"variant", variants::to_string(report.variant)},
          {"workers", options.workers},
          {"start_method", data::to_string(options.start_method)},
          {"persistent_workers", options.persistent_workers},
          {"total_s", report.total_s},
          {"epochs", epochs},
          {"events", events}};
}

nlohmann::json to_json(const variants::FitReport& report, const RunContext& context) {
  const RunOptions& options = *context.options;
  nlohmann::json json;
  json["schema"] = kRunSchema;
  json["schema_version"] = kRunSchemaVersion;
  json["variant"] = variants::to_string(report.variant);
  json["workers"] = options.workers;
  json["epochs"] = options.epochs;
  json["batch_size"] = options.batch_size;
  json["persistent_workers"] = options.persistent_workers;
  json["start_method"] = data::to_string(options.start_method);
  json["device"] = context.device;
  json["seed"] = options.seed;
  json["seed_mode"] = data::to_string(options.seed_mode);
  json["limit_train_batches"] = options.limit_train_batches;
  json["limit_val_batches"] = options.limit_val_batches;
  json["num_sanity_val_steps"] = options.num_sanity_val_steps;
  json["total_s"] = report.total_s;
  json["sanity_check_s"] = report.sanity_check_s;
  nlohmann::json epoch_s = nlohmann::json::array();
  nlohmann::json loss = nlohmann::json::array();
  nlohmann::json val_loss = nlohmann::json::array();
  nlohmann::json samples = nlohmann::json::array();
  nlohmann::json digests = nlohmann::json::array();
  for (const variants::EpochRecord& epoch : report.epochs) {
    epoch_s.push_back(epoch.seconds);
    loss.push_back(epoch.train_loss);
    val_loss.push_back(epoch.val_loss);
    samples.push_back(epoch.train_samples);
    digests.push_back(variants::RunRecorder::hex(epoch.train_order_digest));
  }
  json["epoch_s"] = epoch_s;
  json["loss_per_epoch"] = loss;
  json["val_loss_per_epoch"] = val_loss;
  json["train_samples_per_epoch"] = samples;
  json["train_order_digest_per_epoch"] = digests;
  nlohmann::json parameter_digests = nlohmann::json::array();
  for (const std::uint64_t digest : context.parameter_digests) {
    parameter_digests.push_back(variants::RunRecorder::hex(digest));
  }
  json["parameter_digest_per_epoch"] = parameter_digests;
  json["data_time"] = data_time_json(report.data_time.whole_fit);
  json["sanity_check_data_time"] = data_time_json(report.data_time.sanity_check);
  nlohmann::json per_epoch = nlohmann::json::array();
  for (const variants::DataTime& epoch : report.data_time.epochs) per_epoch.push_back(data_time_json(epoch));
  json["data_time_per_epoch"] = per_epoch;
  json["train"] = loader_json(report.train);
  json["val"] = loader_json(report.val);
  nlohmann::json resets = nlohmann::json::array();
  for (const trace::Event& event : report.events) {
    if (event.kind != trace::EventKind::iterator_reset) continue;
    resets.push_back({{"loader", event.loader},
                      {"epoch", event.epoch},
                      {"phase", event.phase},
                      {"stage", event.stage},
                      {"frames", frames_json(event)}});
  }
  json["reset_events"] = resets;
  return json;
}

std::string summary_table(const variants::FitReport& report, const RunContext& context) {
  const RunOptions& options = *context.options;
  std::string out;
  out += fmt::format("dlreset run: {} ({})\n", variants::to_string(report.variant), variants::describe(report.variant));
  out += fmt::format("  {} worker{} ({}, {}), batch size {}, device {}\n\n", options.workers,
                     options.workers == 1 ? "" : "s", data::to_string(options.start_method),
                     options.persistent_workers ? "persistent" : "not persistent", options.batch_size, context.device);
  out += fmt::format("{:>5}  {:>9}  {:>10}  {:>10}  {:>8}  {:>9}  {:>12}\n", "epoch", "seconds", "train_loss",
                     "val_loss", "samples", "data_wait", "start_wait_s");
  for (std::size_t e = 0; e < report.epochs.size(); ++e) {
    const variants::EpochRecord& epoch = report.epochs[e];
    const variants::DataTime none;
    const variants::DataTime& data = e < report.data_time.epochs.size() ? report.data_time.epochs[e] : none;
    out += fmt::format("{:>5}  {:>9.3f}  {:>10.4f}  {:>10.4f}  {:>8}  {:>8.0f}%  {:>12.3f}\n", e, epoch.seconds,
                       epoch.train_loss, epoch.val_loss, epoch.train_samples, 100.0 * data.wait_fraction(),
                       data.wait_at_start_new_workers_s + data.wait_at_start_workers_kept_s);
  }
  out += fmt::format("\nsanity check {:.3f} s, whole fit {:.3f} s\n", report.sanity_check_s, report.total_s);
  out += data_time_sentence(report.data_time.whole_fit, options.workers) + "\n";
  out += epoch_gaps_line("train", report.train) + epoch_gaps_line("val", report.val) + "\n";
  out += fmt::format("{:<6}  {:>13}  {:>28}  {:>14}  {:>13}\n", "loader", "worker spawns",
                     "iterator resets fit+teardown", "shutdown calls", "dataset loads");
  for (const auto& [name, loader] : {std::pair<const char*, const variants::LoaderReport*>{"train", &report.train},
                                     std::pair<const char*, const variants::LoaderReport*>{"val", &report.val}}) {
    out += fmt::format("{:<6}  {:>13}  {:>28}  {:>14}  {:>13}\n", name, loader->counters.worker_spawns,
                       fmt::format("{} + {}", loader->resets_during_fit, loader->resets_at_teardown),
                       loader->counters.shutdown_calls, loader->counters.dataset_loads);
  }
  return out;
}

}  // namespace dlreset::app
