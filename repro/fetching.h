// Mirrors pytorch_lightning/utilities/fetching.py @ 1.5.0: DataFetcher.reset and teardown.
#pragma once

#include <memory>

#include "harness/lightning/fetching.h"

namespace dlreset::repro {

class DataFetcher : public lightning::DataFetcher {
 public:
  DLRESET_TRACED void reset() override;
  DLRESET_TRACED void teardown() override;
};

std::shared_ptr<lightning::AbstractDataFetcher> make_data_fetcher();

}  // namespace dlreset::repro
