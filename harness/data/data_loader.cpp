// Mirrors torch.utils.data.DataLoader (torch/utils/data/dataloader.py @ v1.13.1).
#include "harness/data/data_loader.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>

#include "harness/data/core/errors.h"
#include "harness/data/core/samplers/sequential_sampler.h"
#include "harness/data/multi_processing_dataloader_iter.h"
#include "harness/data/random_sampler.h"
#include "harness/data/single_process_dataloader_iter.h"
#include "harness/trace/event_log.h"
#include "harness/trace/reset_trace.h"

namespace dlreset::data {

namespace {

void check_options(const Dataset* dataset, const DataLoaderOptions& options) {
  auto fail = [&](const std::string& what) { throw DataLoaderError("DataLoader '" + options.name + "': " + what); };
  if (dataset == nullptr) fail("no dataset was given; pass the Dataset to load from.");
  if (options.batch_size <= 0) {
    fail("batch_size should be a positive integer, but got batch_size=" + std::to_string(options.batch_size) +
         "; use 1 or more.");
  }
  if (options.num_workers < 0) {
    fail("num_workers option should be non-negative, but got num_workers=" + std::to_string(options.num_workers) +
         "; use num_workers=0 to disable multiprocessing.");
  }
  if (options.timeout_s < 0) {
    std::ostringstream value;
    value << options.timeout_s;
    fail("timeout option should be non-negative, but got " + value.str() + " seconds; use 0 to wait forever.");
  }
  if (options.prefetch_factor <= 0) {
    fail("prefetch_factor option should be positive, but got " + std::to_string(options.prefetch_factor) +
         "; the default is 2.");
  }
  if (options.num_workers == 0 && options.prefetch_factor != 2) {
    fail("prefetch_factor option could only be specified in multiprocessing, but got "
         "prefetch_factor=" +
         std::to_string(options.prefetch_factor) +
         " with num_workers=0; let num_workers > 0 to enable multiprocessing.");
  }
  if (options.persistent_workers && options.num_workers == 0) {
    fail("persistent_workers option needs num_workers > 0; set num_workers to 1 or more, or "
         "turn persistent_workers off.");
  }
  if (options.start_method == StartMethod::spawn && options.worker_init_fn) {
    fail("worker_init_fn cannot reach workers started with start_method 'spawn': a spawned "
         "worker is a fresh run of the program, and a C++ function object cannot be sent to "
         "it. Use start_method 'fork' or 'thread', or do the set-up in the dataset's load.");
  }
}

std::unique_ptr<Sampler> make_sampler(const Dataset& dataset, const DataLoaderOptions& options,
                                      const at::Generator& generator) {
  if (!options.shuffle) return std::make_unique<SequentialSampler>(dataset.size());
  if (options.seed_mode == SeedMode::torch) {
    return std::make_unique<RandomSampler>(dataset.size(), generator);
  }
  return std::make_unique<RandomSampler>(dataset.size(), options.seed);
}

}  // namespace

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options)
    : DataLoader(std::move(dataset), std::move(options), nullptr) {}

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options, std::unique_ptr<Sampler> sampler) {
  check_options(dataset.get(), options);
  if (sampler && options.shuffle) {
    throw DataLoaderError("DataLoader '" + options.name +
                          "': sampler option is mutually exclusive with "
                          "shuffle; leave shuffle false and let the sampler shuffle (a "
                          "DistributedSampler's own shuffle option).");
  }
  // torch.Generator().manual_seed(seed): the same stream as Python's for the same seed.
  at::Generator generator;
  if (options.seed_mode == SeedMode::torch) generator = at::detail::createCPUGenerator(options.seed);
  if (!sampler) sampler = make_sampler(*dataset, options, generator);
  BatchSampler batches(std::move(sampler), options.batch_size, options.drop_last);
  state_ =
      std::make_shared<LoaderState>(std::move(options), std::move(dataset), std::move(batches), std::move(generator));
  iterator_.arm(&DataLoader::on_iterator_nulled, this);
}

DataLoader::~DataLoader() {
  // Destroying the loader is not a reset: disarm, so the field's own destruction stays silent.
  iterator_.disarm();
}

void DataLoader::on_iterator_nulled(void* context) {
  auto* self = static_cast<DataLoader*>(context);
  self->state_->stats.iterator_resets.fetch_add(1);
  const trace::Event reset = trace::record_iterator_reset(self->state_->options.name, !self->reset_observers_.empty());
  for (ResetObserver* observer : self->reset_observers_) observer->on_iterator_reset(reset);
}

void DataLoader::add_reset_observer(ResetObserver* observer) { reset_observers_.push_back(observer); }

void DataLoader::remove_reset_observer(ResetObserver* observer) {
  reset_observers_.erase(std::remove(reset_observers_.begin(), reset_observers_.end(), observer),
                         reset_observers_.end());
}

std::shared_ptr<BaseDataLoaderIter> DataLoader::get_iterator() {
  if (state_->options.num_workers == 0) {
    return std::make_shared<SingleProcessDataLoaderIter>(state_);
  }
  return std::make_shared<MultiProcessingDataLoaderIter>(state_);
}

std::shared_ptr<BatchIterator> DataLoader::iter() {
  const double called_s = trace::monotonic_now_s();
  // Only a new multi-process iterator starts workers.
  const PassStart started = state_->options.num_workers > 0 ? PassStart::new_workers : PassStart::workers_kept;
  if (state_->options.persistent_workers && state_->options.num_workers > 0) {
    if (iterator_ == nullptr) {
      iterator_ = get_iterator();
      iterator_->begin_pass(called_s, started);
    } else {
      iterator_->reset(/*first_iter=*/false);
      iterator_->begin_pass(called_s, PassStart::workers_kept);
    }
    return iterator_.get();
  }
  std::shared_ptr<BaseDataLoaderIter> iterator = get_iterator();
  iterator->begin_pass(called_s, started);
  return iterator;
}

}  // namespace dlreset::data
