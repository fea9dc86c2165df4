#include "app/run_report.h"

#include <fmt/format.h>

#include <cstddef>
#include <utility>

#include "harness/trace/reset_trace.h"
#include "harness/trace/stack_trace.h"

namespace dlreset::app {

namespace {

/// Each JSON output names what it is and its version, so a reader (the plot scripts) can refuse
/// one it does not understand instead of misreading it. docs/run-json.md describes both.
constexpr const char* kRunSchema = "dlreset.run";
constexpr const char* kEventsSchema = "dlreset.events";
constexpr int kSchemaVersion = 1;

nlohmann::json loader_json(const variants::LoaderReport& loader) {
  return {{"worker_spawns", loader.counters.worker_spawns},
          {"shutdown_calls", loader.counters.shutdown_calls},
          {"iterator_resets_during_fit", loader.resets_during_fit},
          {"iterator_resets_total", loader.counters.iterator_resets},
          {"iterators_created", loader.counters.iterators_created},
          {"dataset_loads", loader.counters.dataset_loads}};
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
          {"schema_version", kSchemaVersion},
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
  json["schema_version"] = kSchemaVersion;
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
  out += fmt::format("{:>5}  {:>9}  {:>10}  {:>10}  {:>8}\n", "epoch", "seconds", "train_loss", "val_loss", "samples");
  for (std::size_t e = 0; e < report.epochs.size(); ++e) {
    const variants::EpochRecord& epoch = report.epochs[e];
    out += fmt::format("{:>5}  {:>9.3f}  {:>10.4f}  {:>10.4f}  {:>8}\n", e, epoch.seconds, epoch.train_loss,
                       epoch.val_loss, epoch.train_samples);
  }
  out += fmt::format("\nsanity check {:.3f} s, whole fit {:.3f} s\n\n", report.sanity_check_s, report.total_s);
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
