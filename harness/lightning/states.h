// Mirrors pytorch_lightning/trainer/states.py @ 1.5.0: TrainerStatus, TrainerFn and RunningStage.
#pragma once

namespace dlreset::lightning {

/// `TrainerStatus`: set to interrupted when an exception leaves `fit`.
enum class TrainerStatus { initializing, running, finished, interrupted };

/// `TrainerFn`: the entry point that is running. Only `fit` is mirrored.
enum class TrainerFn { fitting };

/// `RunningStage`: where in `fit` the trainer is. Its values name the fetchers' profiler actions
/// (`get_train_batch`, `get_validate_batch`, `get_sanity_check_batch`) and the stage of every
/// event, as in Lightning.
enum class RunningStage { training, sanity_checking, validating, testing };

/// The enum's value in Lightning: "train", "sanity_check", "validate", "test".
const char* value(RunningStage stage);
/// "fit": the profiler's report is titled with it ("FIT Profiler Report").
const char* value(TrainerFn fn);

}  // namespace dlreset::lightning
