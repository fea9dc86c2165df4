// Mirrors _BaseDataLoaderIter of torch/utils/data/dataloader.py @ v1.13.1.
#include "harness/data/base_dataloader_iter.h"

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "harness/data/collate.h"
#include "harness/data/core/interrupt.h"
#include "harness/data/core/splitmix64.h"
#include "harness/data/core/worker/worker_death_watch.h"
#include "harness/trace/event_log.h"

namespace dlreset::data {

namespace {

std::uint64_t draw_base_seed(LoaderState& state) {
  if (state.options.seed_mode == SeedMode::torch) {
    // torch.empty((), dtype=torch.int64).random_(generator=loader.generator).item()
    return static_cast<std::uint64_t>(at::empty({}, at::kLong).random_(state.generator).item<std::int64_t>());
  }
  // Seeds 0, 1, 2 give unrelated worker seeds; 63 bits, so base_seed + worker_id cannot wrap.
  return splitmix64(state.options.seed) >> 1;
}

}  // namespace

BaseDataLoaderIter::BaseDataLoaderIter(std::shared_ptr<LoaderState> state)
    : state_(std::move(state)),
      base_seed_(draw_base_seed(*state_)),
      pin_memory_(pin_memory_function(state_->options.pin_memory, state_->pin_memory_fn)) {
  state_->stats.iterators_created.fetch_add(1);
}

void BaseDataLoaderIter::throw_if_stopped() const {
  // Every batch of every iterator passes here: with 0 workers this is where a pending interrupt
  // is noticed, between two batches, and, whatever the back-end, a dead worker of another
  // loader (torch's SIGCHLD handler raises it in any loop).
  throw_if_interrupted();
  detail::throw_if_a_worker_died(own_worker_pool());
}

template <typename Fetched>
std::optional<Fetched> BaseDataLoaderIter::next_counted(std::optional<Fetched> (BaseDataLoaderIter::*fetch)()) {
  const double called_s = trace::monotonic_now_s();
  throw_if_stopped();
  std::optional<Fetched> batch = (this->*fetch)();
  num_yielded_ += batch ? 1 : 0;
  account_next(called_s, batch.has_value());
  return batch;
}

std::optional<RawBatch> BaseDataLoaderIter::next_raw() { return next_counted(&BaseDataLoaderIter::next_data); }

std::optional<Batch> BaseDataLoaderIter::next() { return next_counted(&BaseDataLoaderIter::next_batch); }

void BaseDataLoaderIter::begin_pass(double iter_called_s, PassStart start) {
  PassTimes pass;
  pass.start = start;
  pass.iter_called_s = iter_called_s;
  pass.iter_s = trace::monotonic_now_s() - iter_called_s;
  state_->passes.push_back(pass);
  pass_index_ = static_cast<std::int64_t>(state_->passes.size()) - 1;
  last_return_s_ = -1.0;
}

PassTimes BaseDataLoaderIter::pass_times() const {
  if (pass_index_ < 0) return {};
  return state_->passes[static_cast<std::size_t>(pass_index_)];
}

void BaseDataLoaderIter::account_next(double called_s, bool batch) {
  const double returned_s = trace::monotonic_now_s();
  if (pass_index_ < 0) return;
  PassTimes& pass = state_->passes[static_cast<std::size_t>(pass_index_)];
  ++pass.next_calls;
  pass.wait_s += returned_s - called_s;
  if (last_return_s_ >= 0.0) {
    pass.step_s += called_s - last_return_s_;
    ++pass.steps;
  }
  if (!batch) {
    last_return_s_ = -1.0;
    return;
  }
  if (++pass.batches == 1) {
    pass.first_batch_s = returned_s - pass.iter_called_s;
    pass.wait_at_start_s = returned_s - called_s;
  }
  last_return_s_ = returned_s;
  pass.last_batch_returned_s = returned_s;
}

std::optional<Batch> BaseDataLoaderIter::next_batch() {
  std::optional<RawBatch> raw = next_data();
  if (!raw) return std::nullopt;
  if (pin_memory_) return pin_memory_(std::move(*raw));
  return collate(std::move(*raw), /*pin_memory=*/false);
}

void BaseDataLoaderIter::reset(bool /*first_iter*/) {
  sampler_iter_ = state_->batch_sampler.iter();
  num_yielded_ = 0;
}

void note_worker_spawn(LoaderState& state, int worker_id, std::int64_t pid, double time_s) {
  state.stats.worker_spawns.fetch_add(1);
  trace::EventLog::global().record(trace::worker_event(trace::EventKind::worker_spawn, state.options.name, worker_id,
                                                       pid, time_s));
}

void note_dataset_load(LoaderState& state, int worker_id, std::int64_t pid, double time_s, double duration_s) {
  state.stats.dataset_loads.fetch_add(1);
  trace::Event event =
      trace::worker_event(trace::EventKind::dataset_loaded, state.options.name, worker_id, pid, time_s);
  event.duration_s = duration_s;
  trace::EventLog::global().record(std::move(event));
}

}  // namespace dlreset::data
