// The oracle: the scenarios of tests/oracle/torch_trace.py, run through the real torch 1.13
// DataLoader and through dlreset's, must leave the same trace.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/data/core/datasets/synthetic_dataset.h"
#include "harness/data/core/errors.h"
#include "harness/data/data_loader.h"
#include "harness/data/multi_processing_dataloader_iter.h"
#include "harness/trace/event_log.h"
#include "tests/support/command.h"
#include "tests/support/fault_dataset.h"
#include "tests/support/fixtures.h"
#include "tests/support/probe_dataset.h"
#include "tests/support/python_torch.h"

namespace dlreset::data {
namespace {

using nlohmann::json;

/// The fields of a scenario's trace that must be equal, in the order a reader would check them.
const char* const kEpochFields[] = {"len", "sent_before_first", "batches", "ended", "next_after_end"};

std::filesystem::path trace_dir() {
  std::filesystem::path dir = std::filesystem::current_path() / "oracle";
  std::filesystem::create_directories(dir);
  return dir;
}

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

void write_json(const std::filesystem::path& path, const json& value) {
  std::ofstream out(path);
  out << value.dump(1) << "\n";
}

/// Runs tests/oracle/torch_trace.py and returns its trace; throws, with what it printed, if it
/// fails or writes a trace of another schema.
json torch_trace(const std::string& name, const std::string& args) {
  const std::filesystem::path out = trace_dir() / ("torch-" + name + ".json");
  std::filesystem::remove(out);
  const std::string command = std::string(testing::kPython) + " " + DLRESET_SOURCE_DIR +
                              "/tests/oracle/torch_trace.py --out " + out.string() + " " + args;
  const testing::CommandResult result = testing::run_shell(command);
  if (result.status != 0) {
    throw std::runtime_error("The real-torch side of the oracle failed (exit status " + std::to_string(result.status) +
                             "): " + command + "\n" + result.err);
  }
  json trace = read_json(out);
  if (trace.value("schema", "") != "dlreset.oracle" || trace.value("schema_version", 0) != 1) {
    throw std::runtime_error(out.string() + " is not a dlreset.oracle trace of schema_version 1; "
                                            "torch_trace.py and this test disagree on the format.");
  }
  return trace;
}

DataLoaderOptions loader_options(const json& trace, const json& params) {
  DataLoaderOptions options;
  options.name = "oracle";
  options.batch_size = trace.at("batch_size").get<std::int64_t>();
  options.seed = trace.at("seed").get<std::uint64_t>();
  options.seed_mode = SeedMode::torch;
  options.shuffle = params.at("shuffle").get<bool>();
  options.drop_last = params.at("drop_last").get<bool>();
  options.num_workers = params.at("num_workers").get<int>();
  options.persistent_workers = params.at("persistent_workers").get<bool>();
  options.prefetch_factor = params.at("prefetch_factor").get<int>();
  options.start_method = *parse_start_method(params.at("start_method").get<std::string>());
  return options;
}

/// What Lightning 1.5.0 did to every loader at the start of every epoch (the script does the
/// same to torch's loader).
void shutdown_workers_and_reset_iterator(DataLoader& loader) {
  if (auto* workers = dynamic_cast<MultiProcessingDataLoaderIter*>(loader.iterator().get().get())) {
    workers->shutdown_workers();
  }
  loader.iterator() = nullptr;
}

template <typename T>
json distinct(const RawBatch& batch, T (*field)(const RawBatch&, std::size_t)) {
  std::set<T> values;
  for (std::size_t i = 0; i < batch.indices.size(); ++i) values.insert(field(batch, i));
  return json(std::vector<T>(values.begin(), values.end()));
}

std::int64_t worker_of(const RawBatch& batch, std::size_t i) {
  return static_cast<std::int64_t>(batch.features[i * 3 + 1]);
}
std::int64_t num_workers_of(const RawBatch& batch, std::size_t i) {
  return static_cast<std::int64_t>(batch.features[i * 3 + 2]);
}
std::int64_t seed_of(const RawBatch& batch, std::size_t i) { return batch.labels[i]; }

/// The script's run_scenario, through dlreset's DataLoader.
/// Dataset loads per worker id ("-1": the main process), from the event log.
json loads_by_worker() {
  std::map<std::string, int> loads;
  for (const trace::Event& event : trace::EventLog::global().events()) {
    if (event.kind == trace::EventKind::dataset_loaded) ++loads[std::to_string(event.worker_id)];
  }
  return json(loads);
}

json dlreset_scenario(const json& trace, const json& params) {
  trace::EventLog::global().clear();
  DataLoader loader(std::make_shared<testing::ProbeDataset>(trace.at("dataset_size").get<std::int64_t>()),
                    loader_options(trace, params));
  json epochs = json::array();
  for (int epoch = 0; epoch < params.at("epochs").get<int>(); ++epoch) {
    if (params.at("variant") == "buggy") shutdown_workers_and_reset_iterator(loader);
    std::shared_ptr<BatchIterator> iterator = loader.iter();
    auto& base = dynamic_cast<BaseDataLoaderIter&>(*iterator);
    auto* workers = dynamic_cast<MultiProcessingDataLoaderIter*>(&base);
    auto pending = [&] { return workers != nullptr ? workers->stats().index_batches_pending : 0; };
    auto outstanding = [&] { return workers != nullptr ? workers->stats().tasks_outstanding : 0; };
    json record = {{"len", loader.size()}, {"sent_before_first", pending()}, {"batches", json::array()}};
    int max_outstanding = outstanding();
    const std::int64_t stop_after = epoch == 1 ? params.at("break_after").get<std::int64_t>() : -1;
    while (true) {
      if (static_cast<std::int64_t>(record["batches"].size()) == stop_after) {
        record["ended"] = "break";
        break;
      }
      std::optional<RawBatch> batch = base.next_raw();
      if (!batch) {
        record["ended"] = "StopIteration";
        break;
      }
      record["batches"].push_back({{"indices", batch->indices},
                                   {"worker", distinct(*batch, &worker_of)},
                                   {"num_workers", distinct(*batch, &num_workers_of)},
                                   {"seed", distinct(*batch, &seed_of)},
                                   {"pending", pending()}});
      max_outstanding = std::max(max_outstanding, outstanding());
    }
    if (record["ended"] == "StopIteration") {
      record["next_after_end"] = base.next_raw() ? "batch" : "StopIteration";
    }
    record["max_outstanding"] = max_outstanding;
    epochs.push_back(std::move(record));
  }
  const LoaderCounters counts = loader.counters();
  return {{"name", params.at("name")},
          {"params", params},
          {"epochs", epochs},
          {"counts",
           {{"worker_spawns", counts.worker_spawns},
            {"dataset_loads", counts.dataset_loads},
            {"dataset_loads_by_worker", loads_by_worker()},
            {"iterators_created", counts.iterators_created},
            {"iterator_resets", counts.iterator_resets},
            {"shutdown_calls", counts.shutdown_calls}}}};
}

/// One side's bound on index batches in flight, which torch asserts and dlreset checks.
void expect_in_flight_bound(const json& scenario, const std::string& side) {
  const json& params = scenario.at("params");
  const int bound = params.at("prefetch_factor").get<int>() * params.at("num_workers").get<int>();
  for (const json& epoch : scenario.at("epochs")) {
    EXPECT_LE(epoch.at("max_outstanding").get<int>(), bound)
        << side << " had more index batches in flight than prefetch_factor x num_workers in " << scenario.at("name");
  }
}

void expect_same_scenario(const json& torch, const json& ours) {
  const std::string name = torch.at("name");
  SCOPED_TRACE("scenario " + name);
  EXPECT_EQ(ours.at("counts").dump(), torch.at("counts").dump()) << "counts differ";
  const json& torch_epochs = torch.at("epochs");
  const json& our_epochs = ours.at("epochs");
  ASSERT_EQ(our_epochs.size(), torch_epochs.size());
  for (std::size_t e = 0; e < torch_epochs.size(); ++e) {
    for (const char* field : kEpochFields) {
      const json torch_value = torch_epochs[e].value(field, json());
      const json our_value = our_epochs[e].value(field, json());
      EXPECT_EQ(our_value.dump(), torch_value.dump())
          << "epoch " << e << "'s " << field << " differs (dlreset's first, torch's second)";
    }
  }
  expect_in_flight_bound(torch, "torch");
  expect_in_flight_bound(ours, "dlreset");
}

/// Scenario groups: one test each, so ctest runs them side by side. A group's name is the
/// prefix of its scenarios' names (variant, start method, workers).
class TorchOracle : public ::testing::TestWithParam<const char*> {};

TEST_P(TorchOracle, SameTraceAsTorch) {
  DLRESET_REQUIRE_ORACLE();
  const std::string group = GetParam();
  const json trace = torch_trace(group, "--only " + group + "-");
  const json& scenarios = trace.at("scenarios");
  ASSERT_FALSE(scenarios.empty()) << "torch_trace.py ran no scenario of group " << group
                                  << "; the grid and this test's groups disagree.";
  json ours = trace;
  ours["scenarios"] = json::array();
  for (const json& torch : scenarios) ours["scenarios"].push_back(dlreset_scenario(trace, torch.at("params")));
  write_json(trace_dir() / ("dlreset-" + group + ".json"), ours);
  for (std::size_t i = 0; i < scenarios.size(); ++i) expect_same_scenario(scenarios[i], ours["scenarios"][i]);
}

INSTANTIATE_TEST_SUITE_P(Groups, TorchOracle,
                         ::testing::Values("buggy-fork-w0", "buggy-fork-w1", "buggy-fork-w2", "buggy-fork-w3",
                                           "buggy-spawn", "fixed-fork-w0", "fixed-fork-w1", "fixed-fork-w2",
                                           "fixed-fork-w3", "fixed-spawn"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

/// dlreset's texts carry the loader's name, the worker's pid and a fix besides torch's words;
/// these go, so that torch's words can be looked for in what is left.
std::string without_insertions(std::string text) {
  text = std::regex_replace(text, std::regex(R"(^DataLoader '[^']*': )"), "");
  text = std::regex_replace(text, std::regex(R"( \(pid [0-9]+\))"), "");
  text = std::regex_replace(text, std::regex(R"( of loader '[^']*')"), "");
  return std::regex_replace(text, std::regex(R"(pid\(s\) [0-9, ]+)"), "pid(s) N");
}

std::string our_error(const std::string& name) {
  testing::FaultDatasetOptions dataset;
  dataset.samples.size = 37;
  dataset.samples.sample_shape = {3};
  DataLoaderOptions options;
  options.name = "oracle";
  options.batch_size = 5;
  options.num_workers = 2;
  if (name == "worker_exception") dataset.throw_at = 3;
  if (name == "worker_killed") dataset.crash_at = 3;
  if (name == "timeout") {
    dataset.hang_at = 3;
    options.timeout_s = 0.5;
  }
  if (name == "persistent_without_workers") {
    options.num_workers = 0;
    options.persistent_workers = true;
  }
  try {
    DataLoader loader(std::make_shared<testing::FaultDataset>(dataset), options);
    std::shared_ptr<BatchIterator> iterator = loader.iter();
    while (iterator->next()) {
    }
  } catch (const WorkerError& e) {
    // Torch raises the worker's own type; dlreset keeps it by name.
    return std::regex_replace(without_insertions(e.what()), std::regex("^Caught " + e.original_type() + " "),
                              "Caught <type> ");
  } catch (const DataLoaderError& e) {
    return without_insertions(e.what());
  }
  return "no error";
}

TEST(TorchOracleErrors, DlresetsTextsHoldTorchsWordForWord) {
  DLRESET_REQUIRE_ORACLE();
  const json trace = torch_trace("errors", "--errors");
  ASSERT_EQ(trace.at("errors").size(), 4u) << "torch_trace.py's error cases changed.";
  for (const json& error : trace.at("errors")) {
    const std::string name = error.at("name");
    std::string torch_text = without_insertions(error.at("message").get<std::string>());
    if (name == "worker_exception") {
      torch_text = std::regex_replace(torch_text, std::regex("^Caught " + error.at("type").get<std::string>() + " "),
                                      "Caught <type> ");
    }
    EXPECT_THAT(our_error(name), ::testing::HasSubstr(torch_text)) << "error case " << name;
  }
}

/// What the idle-death case of torch_trace.py records, from dlreset's DataLoader: loader "idle"
/// (2 persistent workers) read for 3 batches and left idle, loader "busy" (2 workers, 400
/// samples in batches of 2, each sample a few milliseconds of work) read, worker 1 of the idle
/// one SIGKILLed, the busy loop read on until an error.
json our_idle_death(StartMethod method) {
  DataLoaderOptions idle_options;
  idle_options.name = "idle";
  idle_options.batch_size = 2;
  idle_options.num_workers = 2;
  idle_options.persistent_workers = true;
  idle_options.start_method = method;
  std::shared_ptr<DataLoader> idle_loader = testing::synthetic_loader(20, idle_options);
  DataLoader& idle = *idle_loader;
  std::shared_ptr<BatchIterator> idle_iterator = idle.iter();
  for (int batch = 0; batch < 3; ++batch) idle_iterator->next();
  const std::int64_t pid = dynamic_cast<MultiProcessingDataLoaderIter&>(*idle_iterator).worker_pids().at(1);
  DataLoaderOptions busy_options = idle_options;
  busy_options.name = "busy";
  busy_options.persistent_workers = false;
  testing::FaultDatasetOptions busy_samples;
  busy_samples.sample_work = {1'000'000};  // about 3 ms, as torch_trace.py's BUSY_SAMPLE_S
  std::shared_ptr<DataLoader> busy_loader = testing::fault_loader(400, busy_options, busy_samples);
  DataLoader& busy = *busy_loader;
  std::shared_ptr<BatchIterator> busy_iterator = busy.iter();
  busy_iterator->next();
  json result = {{"pid", pid},
                 {"busy_batches", busy.size()},
                 {"raised_in", nullptr},
                 {"message", "no error"},
                 {"busy_batches_after_kill", 0}};
  try {
    ::kill(static_cast<pid_t>(pid), SIGKILL);
    while (busy_iterator->next()) result["busy_batches_after_kill"] = result["busy_batches_after_kill"].get<int>() + 1;
  } catch (const WorkerDiedError& e) {
    result["raised_in"] = "busy";
    result["message"] = e.what();
  }
  return result;
}

class IdleWorkerDeathOracle : public ::testing::TestWithParam<StartMethod> {};

/// Torch 1.13's SIGCHLD handler raises the death of an idle loader's worker in the loop of the
/// loader being read, long before that loop's epoch ends; dlreset's death watch must do the
/// same, with torch's words. How many batches the loop got first depends on when each side
/// looked (torch: when the signal came), so it is bounded by the epoch, not compared.
TEST_P(IdleWorkerDeathOracle, IsRaisedInTheLoopOfTheLoaderBeingReadAsInTorch) {
  DLRESET_REQUIRE_ORACLE();
  const std::string method = to_string(GetParam());
  const json theirs = torch_trace("idle-death-" + method, "--idle-death " + method).at("idle_death");
  const json ours = our_idle_death(GetParam());
  write_json(trace_dir() / ("dlreset-idle-death-" + method + ".json"), ours);
  for (const json* side : {&theirs, &ours}) {
    const char* who = side == &theirs ? "torch" : "dlreset";
    EXPECT_EQ(side->at("raised_in"), "busy") << who << ": " << side->dump();
    EXPECT_LT(side->at("busy_batches_after_kill").get<int>(), side->at("busy_batches").get<int>() - 1)
        << who << ": the busy loop's epoch ran out before the death was raised";
  }
  std::string torch_words = without_insertions(theirs.at("message").get<std::string>());
  torch_words.erase(torch_words.find_last_not_of(' ') + 1);
  EXPECT_THAT(without_insertions(ours.at("message").get<std::string>()), ::testing::HasSubstr(torch_words));
}

INSTANTIATE_TEST_SUITE_P(Methods, IdleWorkerDeathOracle, ::testing::Values(StartMethod::fork, StartMethod::spawn),
                         testing::start_method_name);

}  // namespace
}  // namespace dlreset::data
