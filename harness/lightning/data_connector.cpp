// Mirrors pytorch_lightning/trainer/connectors/data_connector.py @ 1.5.0.
#include "harness/lightning/data_connector.h"

#include <stdexcept>
#include <utility>

#include "harness/lightning/trainer.h"

namespace dlreset::lightning {

DataConnector::DataConnector(Trainer& trainer, DataFetcherFactory select_data_fetcher)
    : trainer_(trainer), select_data_fetcher_(std::move(select_data_fetcher)) {
  if (!select_data_fetcher_) {
    throw std::invalid_argument("The Trainer needs a data fetcher factory: pick a variant "
                                "(buggy, fixed or workaround).");
  }
}

std::shared_ptr<AbstractDataFetcher>& DataConnector::fetcher_of(RunningStage stage) {
  switch (stage) {
    case RunningStage::training: return train_data_fetcher_;
    case RunningStage::validating: return validate_data_fetcher_;
    case RunningStage::testing: return test_data_fetcher_;
    case RunningStage::sanity_checking: return sanity_check_data_fetcher_;
  }
  throw std::invalid_argument("Unknown running stage; expected train, validate, test or sanity_check.");
}

std::shared_ptr<AbstractDataFetcher> DataConnector::get_profiled_dataloader(
    std::shared_ptr<data::BatchIterable> dataloader, RunningStage stage) {
  std::shared_ptr<AbstractDataFetcher> data_fetcher = select_data_fetcher_();
  FetcherSetup setup;
  setup.stage = value(stage);
  setup.profiler = &trainer_.profiler();
  data_fetcher->setup(std::move(dataloader), std::move(setup));
  fetcher_of(stage) = data_fetcher;
  return data_fetcher;
}

void DataConnector::teardown() {
  for (const RunningStage stage :
       {RunningStage::training, RunningStage::validating, RunningStage::testing, RunningStage::sanity_checking}) {
    std::shared_ptr<AbstractDataFetcher>& fetcher = fetcher_of(stage);
    if (fetcher) {
      fetcher->teardown();
      fetcher = nullptr;
    }
  }
}

}  // namespace dlreset::lightning
