// A module that costs nothing: the regression gate measures loaders, not the model.
#pragma once

#include "harness/lightning/lightning_module.h"

#include <cstdint>

namespace dlreset::testing {

class ProbeModule : public lightning::LightningModule {
 public:
  double training_step(const data::Batch& batch, std::int64_t) override { return loss(batch); }
  double validation_step(const data::Batch& batch, std::int64_t) override { return loss(batch); }

 private:
  static double loss(const data::Batch& batch) {
    return static_cast<double>(batch.indices.empty() ? 0 : batch.indices.front());
  }
};

}  // namespace dlreset::testing
