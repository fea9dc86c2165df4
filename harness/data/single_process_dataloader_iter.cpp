// Mirrors _SingleProcessDataLoaderIter of torch/utils/data/dataloader.py @ v1.13.1.
#include "harness/data/single_process_dataloader_iter.h"

#include <unistd.h>

#include <cstdint>
#include <optional>
#include <utility>

#include "harness/data/core/fetch.h"
#include "harness/data/core/memory/block_pool.h"
#include "harness/trace/event_log.h"

namespace dlreset::data {

SingleProcessDataLoaderIter::SingleProcessDataLoaderIter(std::shared_ptr<LoaderState> state)
    : BaseDataLoaderIter(std::move(state)),
      blocks_{std::make_shared<detail::BlockPool>(), std::make_shared<detail::BlockPool>()},
      indices_(std::make_shared<detail::BlockPool>()) {
  reset(/*first_iter=*/true);
}

std::optional<RawBatch> SingleProcessDataLoaderIter::next_data() {
  IndexBuffer indices{IndexBuffer::allocator_type(indices_)};
  if (!next_index(indices)) return std::nullopt;
  Dataset& dataset = *state_->dataset;
  const std::int64_t loads_before = dataset.loads();
  // A load counts even when the fetch that triggered it then fails.
  struct LoadReporter {
    LoaderState& state;
    Dataset& dataset;
    std::int64_t before;
    ~LoadReporter() {
      if (dataset.loads() != before) {
        note_dataset_load(state, -1, ::getpid(), trace::monotonic_now_s(), dataset.last_load_seconds());
      }
    }
  } reporter{*state_, dataset, loads_before};
  return fetch_batch(dataset, std::move(indices), blocks_);
}

}  // namespace dlreset::data
