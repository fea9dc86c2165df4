// Mirrors pytorch_lightning/plugins/training_type/training_type_plugin.py @ 1.5.0.
#include "harness/lightning/training_type_plugin.h"

#include "harness/lightning/trainer.h"

namespace dlreset::lightning {

void TrainingTypePlugin::start_training(Trainer& trainer) { trainer.run_stage(); }

}  // namespace dlreset::lightning
