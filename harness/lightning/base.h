// Mirrors pytorch_lightning/loops/base.py @ 1.5.0.
#pragma once

#include <cstdint>
#include <memory>

#include "harness/trace/traced.h"

namespace dlreset::lightning {

class AbstractDataFetcher;
class Trainer;

/// Python's StopIteration: an exhausted fetcher throws it, and `Loop::run` ends the loop on it.
struct StopIteration {};

/// What Python passes as `*args` to `run`: the epoch loops get their fetcher this way.
struct RunArgs {
  std::shared_ptr<AbstractDataFetcher> data_fetcher;
  int dataloader_idx = 0;
  std::int64_t dl_max_batches = 0;
};

/// Lightning's loop template. `run` is
///
///     if skip: return
///     reset()
///     on_run_start(*args)
///     while not done:
///         try:
///             on_advance_start(*args)
///             advance(*args)
///             on_advance_end()
///         except StopIteration:
///             break
///     on_run_end()
///
/// and subclasses fill in the hooks; `done`, `reset` and `advance` must be given.
class Loop {
 public:
  virtual ~Loop() = default;

  DLRESET_TRACED void run(const RunArgs& args = {});

  virtual bool done() const = 0;
  virtual bool skip() const { return false; }
  virtual void reset() = 0;
  virtual void on_run_start(const RunArgs& /*args*/) {}
  virtual void on_advance_start(const RunArgs& /*args*/) {}
  virtual void advance(const RunArgs& args) = 0;
  virtual void on_advance_end() {}
  virtual void on_run_end() {}

  /// Lightning's `loop.trainer = trainer`, which also reaches the loop's child loops.
  virtual void connect_trainer(Trainer* trainer) { trainer_ = trainer; }

 protected:
  /// The trainer this loop belongs to (Lightning's `self.trainer`).
  Trainer* trainer_ = nullptr;
};

}  // namespace dlreset::lightning
