// Mirrors pytorch_lightning/trainer/connectors/data_connector.py @ 1.5.0.
#include "harness/loops/data_connector.h"

#include <stdexcept>

#include "harness/loops/trainer.h"

namespace dlreset::loops {

DataConnector::DataConnector(Trainer& trainer, DataFetcherFactory select_data_fetcher)
    : trainer_(trainer), select_data_fetcher_(std::move(select_data_fetcher)) {
  if (!select_data_fetcher_) {
    throw std::invalid_argument("The Trainer needs a data fetcher factory: pick a variant "
                                "(buggy, fixed or workaround).");
  }
}

std::shared_ptr<AbstractDataFetcher>& DataConnector::fetcher_of(const std::string& stage) {
  if (stage == "train") return train_data_fetcher_;
  if (stage == "validate") return validate_data_fetcher_;
  if (stage == "test") return test_data_fetcher_;
  if (stage == "sanity_check") return sanity_check_data_fetcher_;
  throw std::invalid_argument("Unknown stage '" + stage +
                              "'; expected train, validate, test or sanity_check.");
}

std::shared_ptr<AbstractDataFetcher> DataConnector::get_profiled_dataloader(
    std::shared_ptr<data::BatchIterable> dataloader, const std::string& stage) {
  std::shared_ptr<AbstractDataFetcher> data_fetcher = select_data_fetcher_();
  LightningModule& module = trainer_.lightning_module();
  FetcherSetup setup;
  setup.stage = stage;
  setup.profiler = &trainer_.profiler();
  setup.batch_to_device = [&module](data::Batch batch) {
    return module.transfer_batch_to_device(std::move(batch));
  };
  data_fetcher->setup(std::move(dataloader), std::move(setup));
  fetcher_of(stage) = data_fetcher;
  return data_fetcher;
}

void DataConnector::teardown() {
  for (const char* stage : {"train", "validate", "test", "sanity_check"}) {
    std::shared_ptr<AbstractDataFetcher>& fetcher = fetcher_of(stage);
    if (fetcher) {
      fetcher->teardown();
      fetcher = nullptr;
    }
  }
}

}  // namespace dlreset::loops
