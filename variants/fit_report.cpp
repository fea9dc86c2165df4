#include "variants/fit_report.h"

#include <chrono>
#include <utility>

namespace dlreset::variants {

namespace {

LoaderReport report_of(data::DataLoader& loader, const std::vector<trace::Event>& events, double fit_start_s) {
  LoaderReport report;
  report.counters = loader.counters();
  for (const trace::Event& event : events) {
    if (event.kind != trace::EventKind::iterator_reset || event.loader != loader.name()) continue;
    if (event.phase == "teardown") {
      ++report.resets_at_teardown;
    } else {
      ++report.resets_during_fit;
    }
  }
  report.iterator_null_at_end = loader.iterator() == nullptr;
  // Passes of an earlier fit over the same loader are not this fit's.
  for (const data::PassTimes& pass : loader.passes()) {
    if (pass.iter_called_s >= fit_start_s) report.passes.push_back(pass);
  }
  report.gaps = epoch_gaps_of(report.passes, events, loader.name());
  return report;
}

}  // namespace

FitReport run_fit(Variant variant, lightning::LightningModule& model,
                  const std::shared_ptr<data::DataLoader>& train_dataloader,
                  const std::shared_ptr<data::DataLoader>& val_dataloader, lightning::TrainerOptions options) {
  trace::EventLog& log = trace::EventLog::global();
  log.clear();
  const double origin_s = log.origin_s();
  RunRecorder recorder(options.reduce_mean);
  options.callbacks.insert(options.callbacks.begin(), &recorder);
  const auto start = std::chrono::steady_clock::now();
  const double start_s = trace::monotonic_now_s();
  const FitLoaders ran = fit(variant, model, train_dataloader, val_dataloader, std::move(options));
  FitReport report;
  report.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.variant = variant;
  report.origin_s = origin_s;
  report.events = log.events();
  report.train = report_of(*ran.train, report.events, start_s);
  if (ran.val) report.val = report_of(*ran.val, report.events, start_s);
  report.epochs = recorder.epochs();
  report.sanity_check_s = recorder.sanity_check_seconds();
  std::vector<TimeSpan> spans;
  for (const EpochRecord& epoch : report.epochs) spans.push_back({epoch.start_s, epoch.end_s});
  report.data_time = data_time_of({&report.train.passes, &report.val.passes}, spans);
  return report;
}

}  // namespace dlreset::variants
