// Mirrors pytorch_lightning/trainer/states.py @ 1.5.0.
#include "harness/lightning/states.h"

namespace dlreset::lightning {

const char* value(RunningStage stage) {
  switch (stage) {
    case RunningStage::training: return "train";
    case RunningStage::sanity_checking: return "sanity_check";
    case RunningStage::validating: return "validate";
    case RunningStage::testing: return "test";
  }
  return "unknown";
}

const char* value(TrainerFn fn) {
  switch (fn) {
    case TrainerFn::fitting: return "fit";
  }
  return "unknown";
}

}  // namespace dlreset::lightning
