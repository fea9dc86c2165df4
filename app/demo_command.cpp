#include "app/demo_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "app/embedded_sources.h"
#include "app/fashion_fit.h"
#include "app/run_command.h"  // start_method_names, which --start-method takes in `run` as well
#include "harness/profiler/simple_profiler.h"
#include "harness/sys/own_process.h"
#include "harness/trace/reset_trace.h"
#include "harness/trace/stack_trace.h"
#include "variants/data_time.h"

namespace dlreset::app {

namespace {

using variants::Variant;

/// Writes the demo's text to its stream (stdout), with ANSI colours when they are on.
class Printer {
 public:
  explicit Printer(bool color, std::ostream& stream = std::cout) : color_(color), stream_(stream) {}

  void heading(int step, const std::string& title) {
    out(fmt::format("\n{}Step {}/{}: {}{}\n", style("\033[1;36m"), step, kDemoSteps, title, style("\033[0m")));
  }
  void look_for(const std::string& text) {
    out(fmt::format("{}Look for:{} {}\n\n", style("\033[1;33m"), style("\033[0m"), text));
  }
  void text(const std::string& text) { out(text); }
  void note(const std::string& text) { out(fmt::format("{}{}{}", style("\033[2m"), text, style("\033[0m"))); }
  void diff(const std::string& diff_text) {
    std::istringstream lines(diff_text);
    std::string line;
    while (std::getline(lines, line)) {
      const char* colour = "";
      if (!line.empty() && line[0] == '-' && line.rfind("---", 0) != 0) colour = "\033[31m";
      if (!line.empty() && line[0] == '+' && line.rfind("+++", 0) != 0) colour = "\033[32m";
      if (line.rfind("@@", 0) == 0) colour = "\033[36m";
      out(fmt::format("    {}{}{}\n", style(colour), line, *colour != '\0' ? style("\033[0m") : ""));
    }
  }

 private:
  std::string style(const char* code) const { return color_ ? code : ""; }
  void out(const std::string& text) {
    stream_ << text;
    stream_.flush();
  }
  bool color_;
  std::ostream& stream_;
};

bool use_color(ColorMode mode) {
  if (mode == ColorMode::always) return true;
  if (mode == ColorMode::never) return false;
  const char* term = std::getenv("TERM");
  return ::isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr &&
         (term == nullptr || std::string(term) != "dumb");
}

class Demo {
 public:
  Demo(const DemoOptions& options, Printer& printer) : options_(options), printer_(printer) {}

  void run_step(int step) {
    switch (step) {
      case 1: symptom(); break;
      case 2: profiler(); break;
      case 3: anomaly(); break;
      case 4: hook(); break;
      case 5: root_cause(); break;
      case 6: fix(); break;
    }
  }

 private:
  RunOptions run_options(Variant variant, int workers) const {
    RunOptions run;
    run.variant = variant;
    run.workers = workers;
    run.persistent_workers = workers > 0;
    run.start_method = options_.start_method;
    run.epochs = options_.epochs;
    run.limit_train_batches = options_.limit_train_batches;
    run.limit_val_batches = options_.limit_val_batches;
    run.data_dir = options_.data_dir;
    run.progress = false;
    return run;
  }

  /// A fit with the demo's settings, run once and remembered for later steps.
  const variants::FitReport& fit(Variant variant, int workers) {
    const auto key = std::make_pair(variant, workers);
    auto found = fits_.find(key);
    if (found != fits_.end()) return found->second;
    printer_.note(fmt::format("  running {} with {} worker{} ({})... ", variants::to_string(variant), workers,
                              workers == 1 ? "" : "s", data::to_string(options_.start_method)));
    FashionFit result = fit_fashion_mnist(run_options(variant, workers));
    printer_.note(fmt::format("{:.1f} s\n", result.report.total_s));
    return fits_.emplace(key, std::move(result.report)).first->second;
  }

  void symptom() {
    printer_.heading(1, "The symptom: the same training, slower under Lightning 1.5.0");
    printer_.look_for("the buggy epochs take longer than the plain loop's, with the very same losses: "
                      "only the time differs, and persistent_workers=True did not help.");
    const auto& vanilla = fit(Variant::vanilla, options_.workers);
    const auto& buggy = fit(Variant::buggy, options_.workers);
    printer_.text(fmt::format("\n  {:>5}  {:>14}  {:>19}  {:>10}\n", "epoch", "plain loop (s)", "Lightning 1.5.0 (s)",
                              "loss"));
    for (std::size_t e = 0; e < buggy.epochs.size() && e < vanilla.epochs.size(); ++e) {
      printer_.text(fmt::format("  {:>5}  {:>14.2f}  {:>19.2f}  {:>10.4f}\n", e, vanilla.epochs[e].seconds,
                                buggy.epochs[e].seconds, buggy.epochs[e].train_loss));
    }
    printer_.text(fmt::format("  {:>5}  {:>14.2f}  {:>19.2f}\n", "total", vanilla.total_s, buggy.total_s));
  }

  void profiler() {
    printer_.heading(2, "The profiler: Lightning's SimpleProfiler, 1.5.0 beside 1.5.1");
    printer_.look_for("run_training_epoch grows, and the fetch actions (get_train_batch, fetch_next_train_batch) "
                      "grow with it: the first fetch of every epoch waits for new workers to start and load "
                      "their data. run_training_batch, the training itself, stays as it is in 1.5.1. The "
                      "profiler says where the time goes, not why.");
    const std::map<std::string, profiler::SimpleProfiler::ActionStats> buggy = profiled(Variant::buggy, true);
    const std::map<std::string, profiler::SimpleProfiler::ActionStats> fixed = profiled(Variant::fixed, false);
    std::string table = fmt::format("\n  {:<26}  {:>15}  {:>15}\n", "action", "1.5.0 total (s)", "1.5.1 total (s)");
    for (const char* action : {"run_training_epoch", "get_train_batch", "fetch_next_train_batch", "get_validate_batch",
                               "run_training_batch"}) {
      auto total = [action](const auto& stats) {
        const auto found = stats.find(action);
        return found == stats.end() ? std::string("-")
                                    : fmt::format("{:.2f} ({})", found->second.total_s, found->second.calls);
      };
      table += fmt::format("  {:<26}  {:>15}  {:>15}\n", action, total(buggy), total(fixed));
    }
    printer_.text(table + "  (calls in brackets)\n");
  }

  /// Runs `variant` under a SimpleProfiler, prints its report where `print` says, and returns
  /// its actions by name.
  std::map<std::string, profiler::SimpleProfiler::ActionStats> profiled(Variant variant, bool print) {
    profiler::SimpleProfiler simple;
    FitHooks hooks;
    hooks.profiler = &simple;
    printer_.note(fmt::format("  running {} with the profiler... ", variants::to_string(variant)));
    const FashionFit result = fit_fashion_mnist(run_options(variant, options_.workers), hooks);
    printer_.note(fmt::format("{:.1f} s\n", result.report.total_s));
    if (print) printer_.text("\n" + simple.summary() + "\n");
    std::map<std::string, profiler::SimpleProfiler::ActionStats> stats;
    for (const auto& action : simple.stats()) stats.emplace(action.action, action);
    return stats;
  }

  void anomaly() {
    printer_.heading(3, "The anomaly: more workers, slower");
    printer_.look_for("with the bug every extra worker is one more dataset load per pass, so the total "
                      "grows with the number of workers instead of shrinking; the time goes into waiting "
                      "for data at the passes' starts, while the loop's own work (step) stays the same. "
                      "ci/demo.sh draws it as out/wait.png.");
    std::string table = fmt::format("\n  {:>7}  {:>9}  {:>13}  {:>13}  {:>8}  {:>16}\n", "workers", "total (s)",
                                    "worker spawns", "dataset loads", "step (s)", "start waits (s)");
    for (const int workers : {0, 1, 2, 4}) {
      const auto& report = fit(Variant::buggy, workers);
      const variants::DataTime& data = report.data_time.whole_fit;
      table += fmt::format("  {:>7}  {:>9.2f}  {:>13}  {:>13}  {:>8.2f}  {:>16.2f}\n", workers, report.total_s,
                           report.train.counters.worker_spawns + report.val.counters.worker_spawns,
                           report.train.counters.dataset_loads + report.val.counters.dataset_loads, data.step_s,
                           data.wait_at_start_new_workers_s + data.wait_at_start_workers_kept_s);
    }
    printer_.text(table);
  }

  void hook() {
    printer_.heading(4, "The hook: a watched _iterator that reports who sets it to None");
    printer_.look_for("read it from the bottom: the loader's iterator is nulled by "
                      "shutdown_workers_and_reset_iterator, called from DataFetcher.reset, called from "
                      "the fetcher's __iter__, at the start of every epoch (TrainingEpochLoop.on_run_start).");
    trace::EventLog& log = trace::EventLog::global();
    const trace::TraceOptions saved = log.trace_options();
    trace::TraceOptions capture;
    capture.capture_stacks = true;
    log.set_trace_options(capture);
    RunOptions run = run_options(Variant::buggy, std::max(1, options_.workers));
    run.epochs = 2;
    printer_.note("  running buggy with the watched field armed... ");
    const FashionFit result = fit_fashion_mnist(run);
    log.set_trace_options(saved);
    printer_.note(fmt::format("{:.1f} s\n\n", result.report.total_s));
    for (const trace::Event& event : result.report.events) {
      if (event.kind != trace::EventKind::iterator_reset || event.loader != "train" || !event.stack) continue;
      trace::TracebackOptions format;
      format.title = fmt::format("iterator of loader 'train' set to null at the start of epoch {}", event.epoch);
      for (const char* const* name = trace::kResetHookFrames; *name != nullptr; ++name) {
        format.drop_innermost.emplace_back(*name);
      }
      format.mirror = &mirrored_file;
      format.source = &source_line;
      printer_.text(trace::format_traceback(event.stack->frames(), format));
      return;
    }
    printer_.text("  (no reset was recorded: is the buggy variant still buggy?)\n");
  }

  void root_cause() {
    printer_.heading(5, "The root cause: DataFetcher.reset in Lightning 1.5.0");
    printer_.look_for("reset() runs from __iter__, at every epoch; in 1.5.0 it also shuts the workers down "
                      "and nulls the iterator. 1.5.1 moved those lines into teardown(), which runs once.");
    const auto [first, last] = function_lines("repro/fetching.cpp", "void DataFetcher::reset()");
    printer_.text(fmt::format("  repro/fetching.cpp (mirrors {}):\n\n", mirrored_file("repro/fetching.cpp")));
    printer_.text(source_excerpt("repro/fetching.cpp", first, last));
    printer_.text("\n  The fix, diff -u repro/fetching.cpp fixed/fetching.cpp:\n\n");
    printer_.diff(kFixDiff);
  }

  void fix() {
    printer_.heading(6, "The fix: Lightning 1.5.1");
    printer_.look_for("fixed spawns each loader's workers once and nulls their iterator only at teardown; "
                      "its time matches the plain loop's.");
    std::string table = fmt::format("\n  {:<8}  {:>9}  {:>13}  {:>11}  {:>21}  {:>13}\n", "variant", "total (s)",
                                    "train spawns", "val spawns", "resets fit + teardown", "dataset loads");
    for (const Variant variant : {Variant::buggy, Variant::fixed, Variant::vanilla}) {
      const auto& report = fit(variant, options_.workers);
      table += fmt::format("  {:<8}  {:>9.2f}  {:>13}  {:>11}  {:>21}  {:>13}\n", variants::to_string(variant),
                           report.total_s, report.train.counters.worker_spawns, report.val.counters.worker_spawns,
                           fmt::format("{} + {}", report.train.resets_during_fit + report.val.resets_during_fit,
                                       report.train.resets_at_teardown + report.val.resets_at_teardown),
                           report.train.counters.dataset_loads + report.val.counters.dataset_loads);
    }
    printer_.text(table);
    printer_.text(closing_hints());
  }

  /// Where to go next, for where this binary runs from: a build tree has the tests to run; an
  /// installed one (the Debian package) has the example programs to watch.
  static std::string closing_hints() {
    std::error_code error;
    const std::filesystem::path bin = sys::own_binary_dir();
    const std::filesystem::path prefix = bin.parent_path();
    if (!bin.empty() && std::filesystem::exists(prefix / "CTestTestfile.cmake", error)) {
      return "\n  What guards it: ctest --test-dir " + prefix.string() +
             " -L regression\n"
             "  (tests/lightning/fit_counts_test.cpp checks these counts for every variant; "
             "tests/lightning/workers_are_shutdown_test.cpp is Lightning's own test, ported).\n"
             "  Check a Python loop of your own: " +
             (bin / "dlreset").string() + " watch -- python3 train.py\n";
    }
    const std::filesystem::path examples = prefix / "share" / "dlreset" / "examples";
    return "\n  What guards it: the regression suite of dlreset's source (ctest -L regression) checks these\n"
           "  counts for every variant.\n"
           "  Watch the same bug in a plain torch program: dlreset watch -- python3 " +
           (examples / "lightning_10389.py").string() +
           "\n"
           "  and its fix: dlreset watch -- python3 " +
           (examples / "lightning_10389.py").string() + " --fixed\n";
  }

  const DemoOptions& options_;
  Printer& printer_;
  std::map<std::pair<Variant, int>, variants::FitReport> fits_;
};

}  // namespace

void add_demo_command(CLI::App& parent, DemoCommandLine& command) {
  command.app =
      parent.add_subcommand("demo", "Walk through the investigation of the bug in six steps: symptom, profiler, "
                                    "anomaly, hook, root cause, fix (for workshops; under two minutes with the "
                                    "defaults)");
  CLI::App& demo = *command.app;
  cli::AcceptedValues& accepted = command.accepted;
  DemoOptions& options = command.options;
  DemoFlags& flags = command.flags;
  flags.method = data::to_string(options.start_method);
  accepted.add_switch(demo.add_flag("--interactive", options.interactive, "Wait for Enter between steps"));
  accepted.add(demo.add_option("--step", options.step, "Run only this step"), cli::integer_in(1, kDemoSteps));
  accepted.add_shown(demo.add_option("--color", flags.color,
                                     "Colour the output: auto (on a terminal), always or never"),
                     cli::one_of({"auto", "always", "never"}));
  accepted.add_shown(demo.add_option("--workers", options.workers, "DataLoader workers per loader in the runs"),
                     cli::integer_in(0, 64));
  accepted.add_shown(demo.add_option("--start-method", flags.method, "How workers start: thread, fork or spawn"),
                     cli::one_of(start_method_names()));
  // Two epochs at least: the bug shows from the second one on.
  accepted.add_shown(demo.add_option("--epochs", options.epochs, "Epochs per run"), cli::integer_in(2, 1000));
  accepted.add_shown(demo.add_option("--limit-train-batches", options.limit_train_batches,
                                     "Training batches per epoch"),
                     cli::integer_in(1, cli::kNoUpperBound));
  accepted.add_shown(demo.add_option("--limit-val-batches", options.limit_val_batches, "Validation batches per epoch"),
                     cli::integer_in(1, cli::kNoUpperBound));
  accepted.add_shown(demo.add_option("--data", options.data_dir, "Directory of the Fashion-MNIST IDX files"),
                     cli::path_to("a directory holding the Fashion-MNIST IDX files"));
}

void finish_demo_options(DemoCommandLine& demo) {
  DemoOptions& options = demo.options;
  const DemoFlags& flags = demo.flags;
  options.color = flags.color == "always"  ? ColorMode::always
                  : flags.color == "never" ? ColorMode::never
                                           : ColorMode::automatic;
  options.start_method = *data::parse_start_method(flags.method);
}

int demo_command(const DemoOptions& options) {
  Printer printer(use_color(options.color));
  Demo demo(options, printer);
  printer.text("dlreset demo: PyTorch Lightning issue #10389, \"Lightning is very slow between epochs, "
               "compared to Pytorch\",\nreproduced and explained in six steps.\n");
  const int first = options.step == 0 ? 1 : options.step;
  const int last = options.step == 0 ? kDemoSteps : options.step;
  for (int step = first; step <= last; ++step) {
    demo.run_step(step);
    if (options.interactive && step < last) {
      printer.note(fmt::format("\n  Press Enter for step {} (q and Enter to stop)... ", step + 1));
      std::string answer;
      if (!std::getline(std::cin, answer) || answer == "q") break;
    }
  }
  return 0;
}

}  // namespace dlreset::app
