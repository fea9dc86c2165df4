#include "tests/support/fault_dataset.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <utility>

#include "harness/data/core/datasets/dataset_registry.h"
#include "harness/data/core/splitmix64.h"
#include "harness/data/core/worker/worker_info.h"
#include "harness/trace/event_log.h"

namespace dlreset::testing {

FaultDataset::FaultDataset(FaultDatasetOptions options)
    : SyntheticDataset(options.samples), faults_(std::move(options)) {}

std::int64_t FaultDataset::get(std::int64_t index, float* features) {
  const std::int64_t label = SyntheticDataset::get(index, features);
  if (!faults_.sample_work.empty()) {
    const std::int64_t work = faults_.sample_work[static_cast<std::size_t>(index) % faults_.sample_work.size()];
    double sum = 0.0;
    for (std::int64_t i = 0; i < work; ++i) {
      sum += static_cast<double>(data::splitmix64(static_cast<std::uint64_t>(index + i)) >> 11);
    }
    work_checksum_ += sum;
  }
  if (index == faults_.throw_at) {
    throw std::runtime_error("FaultDataset was told to fail at sample " + std::to_string(index));
  }
  if (index == faults_.crash_at) {
    const data::WorkerInfo* worker = data::get_worker_info();
    if (worker == nullptr || !worker->in_own_process) {
      throw std::logic_error("FaultDataset's crash_at needs a process worker (fork or spawn); it "
                             "would kill this whole process");
    }
    if (!faults_.before_crash.empty()) {
      [[maybe_unused]] const int status = std::system(faults_.before_crash.c_str());
    }
    if (faults_.fork_before_crash_s > 0 && ::fork() == 0) {
      ::sleep(static_cast<unsigned>(faults_.fork_before_crash_s));
      ::_exit(0);
    }
    if (!faults_.crash_stamp_path.empty())
      std::ofstream(faults_.crash_stamp_path) << std::to_string(trace::monotonic_now_s());
    ::kill(::getpid(), SIGKILL);
  }
  if (index == faults_.stall_at) {
    const data::WorkerInfo* worker = data::get_worker_info();
    if (worker == nullptr || !worker->in_own_process) {
      throw std::logic_error("FaultDataset's stall_at needs a process worker (fork or spawn), which "
                             "shutdown can kill; a thread would stall its loader for stall_s seconds");
    }
    ::sleep(static_cast<unsigned>(faults_.stall_s));
  }
  if (index == faults_.hang_at) {
    const data::WorkerInfo* worker = data::get_worker_info();
    if (worker == nullptr) {
      throw std::logic_error("FaultDataset's hang_at needs a worker; in the main process it would "
                             "hang forever");
    }
    worker->wait_until_stopping();
    throw std::runtime_error("FaultDataset's hang at sample " + std::to_string(index) +
                             " ended because the worker was told to stop");
  }
  return label;
}

std::unique_ptr<data::Dataset> FaultDataset::clone() const {
  auto copy = std::make_unique<FaultDataset>(*this);
  copy->reset_load_count();
  return copy;
}

// The faults' own fields; the samples travel as SyntheticDataset's spec, in the same object.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FaultDatasetOptions, throw_at, crash_at, hang_at, stall_at, stall_s, before_crash,
                                   fork_before_crash_s, crash_stamp_path, sample_work)

std::string FaultDataset::spec() const {
  nlohmann::json spec = nlohmann::json::parse(SyntheticDataset::spec());
  spec.update(nlohmann::json(faults_));
  spec["kind"] = "fault";
  return spec.dump();
}

std::unique_ptr<FaultDataset> FaultDataset::from_spec(const std::string& text) {
  auto options = nlohmann::json::parse(text).get<FaultDatasetOptions>();
  options.samples = SyntheticDataset::from_spec(text)->options();
  return std::make_unique<FaultDataset>(std::move(options));
}

DLRESET_REGISTER_DATASET("fault", FaultDataset)

std::shared_ptr<data::DataLoader> fault_loader(std::int64_t size, data::DataLoaderOptions options,
                                               FaultDatasetOptions dataset) {
  dataset.samples.size = size;
  return std::make_shared<data::DataLoader>(std::make_shared<FaultDataset>(std::move(dataset)), std::move(options));
}

}  // namespace dlreset::testing
