// A small hand-written LibTorch training loop over dlreset's DataLoader: the kind of loop a
// user wants to test for worker respawns.
#pragma once

#include <memory>

#include "dlreset/data/data_loader.h"
#include "dlreset/trace/traced.h"

namespace own_loop {

struct OwnLoopOptions {
  int epochs = 3;
  int workers = 2;
  /// What Lightning 1.5.0 did: null the loader's persistent iterator at the start of every
  /// epoch, which stops its workers, so the next epoch starts new ones.
  bool reset_iterator_each_epoch = false;
};

/// Trains a linear classifier on a small synthetic data set with persistent fork workers.
class OwnLoop {
 public:
  explicit OwnLoop(OwnLoopOptions options);

  /// Every epoch; returns the mean loss of the last.
  double fit();
  /// Lets go of the loader's workers, as a trainer's teardown does.
  void teardown();

  const std::shared_ptr<dlreset::data::DataLoader>& train_loader() const { return loader_; }

 private:
  /// Noinline, so that a reset's traceback names it.
  DLRESET_TRACED void start_epoch();

  OwnLoopOptions options_;
  std::shared_ptr<dlreset::data::DataLoader> loader_;
};

}  // namespace own_loop
