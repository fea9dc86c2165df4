// Mirrors _SingleProcessDataLoaderIter of torch/utils/data/dataloader.py @ v1.13.1.
#pragma once

#include <memory>
#include <optional>

#include "harness/data/base_dataloader_iter.h"
#include "harness/data/core/memory/block_source.h"

namespace dlreset::data {

/// num_workers == 0: batches are fetched in the calling thread from the loader's own dataset
/// object, which therefore loads once per process, however many epochs run.
class SingleProcessDataLoaderIter : public BaseDataLoaderIter {
 public:
  explicit SingleProcessDataLoaderIter(std::shared_ptr<LoaderState> state);

 protected:
  std::optional<RawBatch> next_data() override;

 private:
  /// Pools for the batches' features and labels, and for their index lists: a batch's blocks
  /// come back when its tensors and index list die, and the next batch takes them, so an
  /// epoch allocates per batch only what LibTorch's tensors need, as with workers.
  BatchBlocks blocks_;
  std::shared_ptr<BlockSource> indices_;
};

}  // namespace dlreset::data
