// Mirrors pytorch_lightning/utilities/apply_func.py @ 1.5.0.
#include "harness/lightning/apply_func.h"

namespace dlreset::lightning {

void apply_to_collection(data::DataLoader& data, void (*function)(data::DataLoader&)) { function(data); }

}  // namespace dlreset::lightning
