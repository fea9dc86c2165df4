// Mirrors pytorch_lightning/plugins/training_type/training_type_plugin.py @ 1.5.0: start_training.
#pragma once

#include "harness/trace/traced.h"

namespace dlreset::lightning {

class Trainer;

/// Lightning's TrainingTypePlugin, of which dlreset needs one call: `_dispatch` hands the run to
/// the plugin, which calls back `trainer.run_stage()`. It is a frame of every reset trace.
class TrainingTypePlugin {
 public:
  DLRESET_TRACED void start_training(Trainer& trainer);
};

}  // namespace dlreset::lightning
