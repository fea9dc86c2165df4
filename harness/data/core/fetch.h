// Mirrors torch/utils/data/_utils/fetch.py @ v1.13.1 (_MapDatasetFetcher) with collation into
// a RawBatch.
#pragma once

#include <cstdint>

#include "harness/data/core/memory/block_source.h"
#include "harness/data/core/memory/raw_batch.h"

namespace dlreset::data {

class Dataset;

/// Gets every index from the dataset and collates them into one contiguous RawBatch, its
/// features and labels in blocks from `blocks`; the batch keeps `indices`. Runs in the main
/// process (0 workers) or in a worker; touches no LibTorch code.
RawBatch fetch_batch(Dataset& dataset, IndexBuffer indices, BatchBlocks blocks = {});
/// The same, into memory someone else owns (a worker's shared-memory slot): `indices_out` and
/// `labels` hold indices.size() values, `features` indices.size() × sample_numel() floats.
void fetch_batch_into(Dataset& dataset, const IndexBuffer& indices, std::int64_t* indices_out, std::int64_t* labels,
                      float* features);

}  // namespace dlreset::data
