#include "variants/data_time.h"

#include <algorithm>
#include <cstddef>

namespace dlreset::variants {

void DataTime::add(const data::PassTimes& pass) {
  wait_s += pass.wait_s;
  step_s += pass.step_s;
  iter_s += pass.iter_s;
  if (pass.start == data::PassStart::new_workers) {
    wait_at_start_new_workers_s += pass.wait_at_start_s;
    ++starts_new_workers;
  } else {
    wait_at_start_workers_kept_s += pass.wait_at_start_s;
    ++starts_workers_kept;
  }
  wait_steady_s += pass.steady_wait_s();
  ++passes;
  batches += pass.batches;
  if (pass.batches > 0) first_batch_s.push_back(pass.first_batch_s);
}

double DataTime::wait_fraction() const {
  const double measured = wait_s + step_s;
  return measured > 0.0 ? wait_s / measured : 0.0;
}

double DataTime::median_first_batch_s() const {
  if (first_batch_s.empty()) return 0.0;
  std::vector<double> sorted = first_batch_s;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t middle = sorted.size() / 2;
  return sorted.size() % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2.0;
}

FitDataTime data_time_of(const std::vector<const std::vector<data::PassTimes>*>& passes,
                         const std::vector<TimeSpan>& epochs) {
  FitDataTime time;
  time.epochs.resize(epochs.size());
  for (const std::vector<data::PassTimes>* loader : passes) {
    for (const data::PassTimes& pass : *loader) {
      time.whole_fit.add(pass);
      if (!epochs.empty() && pass.iter_called_s < epochs.front().start_s) {
        time.sanity_check.add(pass);
        continue;
      }
      for (std::size_t e = 0; e < epochs.size(); ++e) {
        if (pass.iter_called_s >= epochs[e].start_s && pass.iter_called_s <= epochs[e].end_s) {
          time.epochs[e].add(pass);
          break;
        }
      }
    }
  }
  return time;
}

}  // namespace dlreset::variants
