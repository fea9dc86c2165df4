// The reporter's workaround for 1.5.0 (Lightning issue #10389): `self.reset()` deleted from
// DataFetcher.__iter__ (pytorch_lightning/utilities/fetching.py @ 1.5.0).
#include "workaround/workaround.h"

namespace dlreset::workaround {

void WorkaroundDataFetcher::iter() {
  dataloader_iter_ = dataloader().iter();
  prefetching();
}

std::shared_ptr<lightning::AbstractDataFetcher> make_workaround_data_fetcher() {
  return std::make_shared<WorkaroundDataFetcher>();
}

}  // namespace dlreset::workaround
