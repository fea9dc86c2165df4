// Checks dlreset's CNN workload against real PyTorch (tests/oracle/workload_reference.py): with
// the same seed, the same initial weights and, through the vanilla loop, the same loss at every
// step of the first Fashion-MNIST batches, bit for bit, on CPU.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "app/fashion_fit.h"
#include "app/run_options.h"
#include "harness/data/core/datasets/idx_dataset.h"
#include "harness/data/data_loader.h"
#include "harness/lightning/callback.h"
#include "harness/lightning/trainer_options.h"
#include "harness/workload/fashion_mnist_module.h"
#include "tests/support/command.h"
#include "tests/support/fixtures.h"
#include "tests/support/python_torch.h"
#include "variants/vanilla_fit.h"

namespace dlreset::workload {
namespace {

/// Enough steps for the momentum buffers to matter and for a wrong gradient to show in the
/// loss, few enough that both sides take about a second.
constexpr std::int64_t kBatches = 20;

struct Parameter {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

/// What one side gives: the initial parameters and the mean loss of every training step.
struct Trajectory {
  std::vector<Parameter> parameters;
  std::vector<double> losses;
};

class LossRecorder : public lightning::Callback {
 public:
  explicit LossRecorder(std::vector<double>* losses) : losses_(losses) {}
  void on_train_batch_end(const data::Batch& /*batch*/, std::int64_t /*batch_idx*/, double loss) override {
    losses_->push_back(loss);
  }

 private:
  std::vector<double>* losses_;
};

/// The workload of `run`, as fit_fashion_mnist builds it, on CPU.
WorkloadOptions workload_of(app::RunOptions run) {
  run.device = "cpu";
  return app::workload_options(run);
}

/// `dlreset run --variant vanilla` with its defaults, except that the training batches come in
/// order (the reference cannot replay dlreset's shuffle) from the main process (workers do not
/// change the batches: see variant_parity_test.cpp) and that there is no validation.
Trajectory run_dlreset(const app::RunOptions& run) {
  FashionMnistModule model(workload_of(run));
  Trajectory result;
  for (const auto& [name, tensor] : model.named_parameters()) {
    const at::Tensor values = tensor.contiguous();
    const float* first = values.data_ptr<float>();
    result.parameters.push_back({name, tensor.sizes().vec(), std::vector<float>(first, first + values.numel())});
  }
  data::DataLoaderOptions loader;
  loader.name = "train";
  loader.batch_size = run.batch_size;
  loader.shuffle = false;
  auto train = std::make_shared<data::DataLoader>(std::shared_ptr<data::Dataset>(data::make_fashion_mnist(run.data_dir,
                                                                                                          "train")),
                                                  loader);
  LossRecorder recorder(&result.losses);
  lightning::TrainerOptions trainer;
  trainer.max_epochs = 1;
  trainer.limit_train_batches = kBatches;
  trainer.callbacks = {&recorder};
  variants::vanilla_fit(model, train, /*val_dataloader=*/nullptr, trainer);
  return result;
}

/// Little-endian float32 bytes, as hex, back to floats.
std::vector<float> decode_f32le(const std::string& hex) {
  std::vector<unsigned char> bytes(hex.size() / 2);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

std::string decimal(double value, int digits) {
  std::ostringstream out;
  out << std::setprecision(digits) << value;
  return out.str();
}

/// The reference script's run, with the settings of `run` and of its workload.
Trajectory run_reference(const app::RunOptions& run) {
  const WorkloadOptions workload = workload_of(run);
  // 9 significant digits bring a float back exactly, 17 a double.
  const std::string command =
      std::string(testing::kPython) + " " + DLRESET_SOURCE_DIR + "/tests/oracle/workload_reference.py --data-dir " +
      run.data_dir + " --seed " + std::to_string(workload.seed) + " --batches " + std::to_string(kBatches) +
      " --batch-size " + std::to_string(run.batch_size) + " --lr " + decimal(workload.learning_rate, 17) +
      " --momentum " + decimal(workload.momentum, 17) + " --mean " + decimal(data::kFashionMnistMean, 9) + " --std " +
      decimal(data::kFashionMnistStd, 9);
  const testing::CommandResult result = testing::run_shell(command);
  Trajectory reference;
  EXPECT_EQ(result.status, 0) << "The reference script failed; the command was\n  " << command << "\nand it said:\n"
                              << result.err;
  if (result.status != 0) return reference;
  const nlohmann::json report = nlohmann::json::parse(result.out);
  for (const auto& parameter : report.at("parameters")) {
    reference.parameters.push_back({parameter.at("name").get<std::string>(),
                                    parameter.at("shape").get<std::vector<std::int64_t>>(),
                                    decode_f32le(parameter.at("f32le").get<std::string>())});
  }
  for (const auto& loss : report.at("losses")) {
    reference.losses.push_back(std::strtod(loss.get<std::string>().c_str(), nullptr));  // hex floats
  }
  return reference;
}

std::string exact(double value) {
  std::ostringstream out;
  out << std::setprecision(9) << value << " (" << std::hexfloat << value << ")";
  return out.str();
}

double relative_difference(double ours, double theirs) {
  return theirs == 0.0 ? std::fabs(ours) : std::fabs(ours - theirs) / std::fabs(theirs);
}

/// Counts the values whose bits differ; describes the first and the largest relative difference.
void expect_bitwise_equal(const Parameter& ours, const Parameter& theirs) {
  ASSERT_EQ(ours.values.size(), theirs.values.size()) << ours.name;
  std::size_t differing = 0;
  std::size_t first = 0;
  double largest = 0.0;
  for (std::size_t i = 0; i < ours.values.size(); ++i) {
    if (std::memcmp(&ours.values[i], &theirs.values[i], sizeof(float)) == 0) continue;
    if (differing++ == 0) first = i;
    largest = std::max(largest, relative_difference(ours.values[i], theirs.values[i]));
  }
  EXPECT_EQ(differing, 0u) << ours.name << ": " << differing << " of " << ours.values.size()
                           << " initial values differ from torch.nn's, the first at flat index " << first << " ("
                           << exact(ours.values[first]) << " against " << exact(theirs.values[first])
                           << "), the largest by " << largest
                           << " relative. LibTorch's modules initialise as torch.nn's do: look for a module "
                           << "built in another order, or an init that draws from the generator differently.";
}

TEST(WorkloadOracle, InitialWeightsAndEveryVanillaLossAreRealTorchsBitForBit) {
  DLRESET_REQUIRE_ORACLE();
  const app::RunOptions run;
  // The reference fixes what it cannot take as a flag: one intra-op thread, SGD with momentum.
  ASSERT_EQ(run.intra_op_threads, 1) << "`dlreset run` now defaults to " << run.intra_op_threads
                                     << " intra-op threads but the reference runs on one; give both the same.";
  ASSERT_EQ(run.optimizer, "sgd") << "`dlreset run` now defaults to the optimizer '" << run.optimizer
                                  << "' but the reference trains with SGD; give both the same.";
  const Trajectory reference = run_reference(run);
  ASSERT_FALSE(reference.losses.empty());
  const Trajectory ours = run_dlreset(run);

  ASSERT_EQ(ours.parameters.size(), reference.parameters.size())
      << "dlreset's CNN has " << ours.parameters.size() << " parameter tensors and the reference's "
      << reference.parameters.size() << "; build the same layers on both sides.";
  for (std::size_t i = 0; i < ours.parameters.size(); ++i) {
    EXPECT_EQ(ours.parameters[i].name, reference.parameters[i].name) << "parameter " << i;
    EXPECT_EQ(ours.parameters[i].shape, reference.parameters[i].shape) << ours.parameters[i].name;
    expect_bitwise_equal(ours.parameters[i], reference.parameters[i]);
  }
  ASSERT_EQ(ours.losses.size(), static_cast<std::size_t>(kBatches));
  ASSERT_EQ(reference.losses.size(), static_cast<std::size_t>(kBatches));
  for (std::size_t step = 0; step < ours.losses.size(); ++step) {
    EXPECT_EQ(ours.losses[step], reference.losses[step])
        << "Step " << step << "'s loss is " << exact(ours.losses[step]) << " in dlreset and "
        << exact(reference.losses[step]) << " in real torch, "
        << relative_difference(ours.losses[step], reference.losses[step])
        << " relative. With equal initial weights and batches, look at what differs in the step: the "
        << "normalisation's arithmetic, the thread count, the optimizer's update.";
  }
}

}  // namespace
}  // namespace dlreset::workload
