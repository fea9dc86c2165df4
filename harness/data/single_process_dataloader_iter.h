// Mirrors _SingleProcessDataLoaderIter of torch/utils/data/dataloader.py @ v1.13.1.
#pragma once

#include "harness/data/base_dataloader_iter.h"

namespace dlreset::data {

/// num_workers == 0: batches are fetched in the calling thread from the loader's own dataset
/// object, which therefore loads once per process, however many epochs run.
class SingleProcessDataLoaderIter : public BaseDataLoaderIter {
 public:
  explicit SingleProcessDataLoaderIter(std::shared_ptr<LoaderState> state);

 protected:
  std::optional<RawBatch> next_data() override;
};

}  // namespace dlreset::data
