// The reporter's workaround for 1.5.0 (Lightning issue #10389): `self.reset()` deleted from
// DataFetcher.__iter__ (pytorch_lightning/utilities/fetching.py @ 1.5.0).
#pragma once

#include <memory>

#include "repro/fetching.h"

namespace dlreset::workaround {

/// 1.5.0's fetcher, whose `__iter__` no longer calls `reset()`. It works in 1.5.0 only because
/// a new fetcher is made every epoch, so the counters it no longer clears start at zero anyway;
/// 1.5.0's `reset()` still runs once, from `teardown()`.
class WorkaroundDataFetcher : public repro::DataFetcher {
 public:
  DLRESET_TRACED void iter() override;
};

std::shared_ptr<lightning::AbstractDataFetcher> make_workaround_data_fetcher();

}  // namespace dlreset::workaround
