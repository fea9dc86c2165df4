// The interface through which a test watches one DataLoader's persistent-iterator resets.
#pragma once

#include "harness/trace/event_log.h"

namespace dlreset::data {

/// Told of every reset of one loader's persistent iterator (a live iterator replaced by null),
/// on the thread that stored the null and before the old iterator is released, with the
/// stack that did it. The event log keeps every reset too, but is global and cleared by every
/// measured fit; an observer sees this loader's resets alone, whatever clears the log.
class ResetObserver {
 public:
  virtual ~ResetObserver() = default;
  /// `reset` has its epoch, phase and stage filled in, and its stack captured.
  virtual void on_iterator_reset(const trace::Event& reset) = 0;
};

}  // namespace dlreset::data
