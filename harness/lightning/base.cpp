// Mirrors pytorch_lightning/loops/base.py @ 1.5.0.
#include "harness/lightning/base.h"

namespace dlreset::lightning {

void Loop::run(const RunArgs& args) {
  if (skip()) return;
  reset();
  on_run_start(args);
  while (!done()) {
    try {
      on_advance_start(args);
      advance(args);
      on_advance_end();
    } catch (const StopIteration&) {
      break;
    }
  }
  on_run_end();
}

}  // namespace dlreset::lightning
