// Mirrors pytorch_lightning/plugins/training_type/training_type_plugin.py @ 1.5.0.
#include "harness/loops/training_type_plugin.h"

#include "harness/loops/trainer.h"

namespace dlreset::loops {

void TrainingTypePlugin::start_training(Trainer& trainer) { trainer.run_stage(); }

}  // namespace dlreset::loops
