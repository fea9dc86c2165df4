// Mirrors pytorch_lightning/trainer/connectors/data_connector.py @ 1.5.0.
#pragma once

#include <memory>
#include <string>

#include "harness/lightning/fetching.h"
#include "harness/lightning/states.h"
#include "harness/trace/traced.h"

namespace dlreset::lightning {

class Trainer;

/// Hands the loops their fetchers. Every call of `get_profiled_dataloader` makes a *new*
/// fetcher, so each epoch and each evaluation run starts from a fresh one; the newest of each
/// stage is kept until `teardown()`.
class DataConnector {
 public:
  DataConnector(Trainer& trainer, DataFetcherFactory select_data_fetcher);

  /// Lightning reads the stage from `trainer.state.stage`; dlreset's loops pass it.
  DLRESET_TRACED std::shared_ptr<AbstractDataFetcher> get_profiled_dataloader(
      std::shared_ptr<data::BatchIterable> dataloader, RunningStage stage);
  /// Tears down the kept fetchers: train, validate, test, sanity_check, in Lightning's order.
  DLRESET_TRACED void teardown();

 private:
  /// `{stage}_data_fetcher`
  std::shared_ptr<AbstractDataFetcher>& fetcher_of(RunningStage stage);

  Trainer& trainer_;
  DataFetcherFactory select_data_fetcher_;
  std::shared_ptr<AbstractDataFetcher> train_data_fetcher_;
  std::shared_ptr<AbstractDataFetcher> validate_data_fetcher_;
  std::shared_ptr<AbstractDataFetcher> test_data_fetcher_;
  std::shared_ptr<AbstractDataFetcher> sanity_check_data_fetcher_;
};

}  // namespace dlreset::lightning
