// Bad input to `dlreset run`, called in this process so that a table of ~100 cases costs no
// program start each (cli_test.cpp runs the real binary; cli_signal_test.cpp its signals).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli.h"
#include "harness/data/core/datasets/idx_reader.h"
#include "tests/support/fixtures.h"
#include "tests/support/process_census.h"

namespace dlreset::app {
namespace {

using ::dlreset::testing::ProcessCensus;
using ::dlreset::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

/// Runs main_cli on `args` with std::cout and std::cerr captured.
Outcome run_cli(const std::vector<std::string>& args) {
  std::vector<std::string> storage = {"dlreset"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::ostringstream out;
  std::ostringstream err;
  std::streambuf* const old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* const old_err = std::cerr.rdbuf(err.rdbuf());
  Outcome outcome;
  try {
    outcome.status = main_cli(static_cast<int>(storage.size()), argv.data());
  } catch (...) {
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
    throw;
  }
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  outcome.out = out.str();
  outcome.err = err.str();
  return outcome;
}

std::string joined(const std::vector<std::string>& args) {
  std::string text;
  for (const std::string& arg : args) text += (text.empty() ? "" : " ") + ("'" + arg + "'");
  return text;
}

int lines_in(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

/// One bad command line and the flag its error must name.
struct BadFlag {
  std::vector<std::string> args;
  std::string flag;
};

/// Every flag of `dlreset run`, each given values out of its range, malformed values and no
/// value at all.
std::vector<BadFlag> bad_flags() {
  std::vector<BadFlag> cases;
  auto add = [&](const std::string& flag, const std::vector<std::string>& values) {
    for (const std::string& value : values) cases.push_back({{"run", flag, value}, flag});
    // Missing: last on the line, and followed by another flag.
    cases.push_back({{"run", flag}, flag});
    cases.push_back({{"run", flag, "--no-progress"}, flag});
  };
  add("--variant", {"newest", "Buggy", ""});
  add("--workers", {"-1", "65", "two", "1.5", "0x2", " 2", ""});
  add("--epochs", {"0", "100001", "3e2", "x", ""});
  add("--batch-size", {"0", "60001", "64.0", "-64"});
  add("--start-method", {"clone", "FORK", ""});
  add("--limit-train-batches", {"-3", "10%", "99999999999999999999"});
  add("--limit-val-batches", {"-1", "1/2", ""});
  add("--num-sanity-val-steps", {"-2", "all", "2147483648"});
  add("--data", {""});
  add("--device", {"tpu", "CPU", ""});
  add("--optimizer", {"rmsprop", "SGD", ""});
  add("--lr", {"0", "-0.1", "inf", "1e999", "nan", "fast", ""});
  add("--intra-op-threads", {"0", "257", "one"});
  add("--seed", {"-1", "18446744073709551616", "1.5", "abc", ""});
  add("--json", {"/nonexistent/dir/report.json", "/tmp", ""});
  add("--events", {"/nonexistent/dir/events.json", "/tmp", ""});
  add("--seed-mode", {"random", "Torch", ""});
  // Switches take no value; given an explicit one, it must read as a boolean.
  for (const std::string flag :
       {"--no-persistent-workers", "--no-pin-memory", "--trace-resets", "--profiler", "--no-progress"}) {
    cases.push_back({{"run", flag + "=maybe"}, flag});
  }
  cases.push_back({{"run", "--no-such-flag"}, "--no-such-flag"});
  cases.push_back({{"run", "--workers", "1", "--workers", "2"}, "--workers"});
  // Both on stdout would interleave two documents.
  cases.push_back({{"run", "--json", "-", "--events", "-"}, "--events -"});
  return cases;
}

TEST(CliInput, EveryBadFlagExitsTwoWithOneLineNamingTheFlag) {
  int checked = 0;
  for (const BadFlag& bad : bad_flags()) {
    const Outcome outcome = run_cli(bad.args);
    const std::string context = joined(bad.args) + " -> " + outcome.err;
    EXPECT_EQ(outcome.status, 2) << context;
    EXPECT_EQ(lines_in(outcome.err), 1) << context;
    EXPECT_THAT(outcome.err, HasSubstr(bad.flag)) << context;
    EXPECT_EQ(outcome.out, "") << context;
    ++checked;
  }
  EXPECT_GE(checked, 90) << "the table of bad flags shrank";
}

TEST(CliInput, UnusableValuesSayWhatTheFlagAccepts) {
  EXPECT_THAT(run_cli({"run", "--lr", "nan"}).err,
              HasSubstr("--lr: 'nan' is not a valid value (--lr accepts a positive finite number)"));
  EXPECT_THAT(run_cli({"run", "--seed", "-1"}).err, HasSubstr("(--seed accepts an integer from 0 to 2^64 - 1)"));
  EXPECT_THAT(run_cli({"run", "--json", "/nonexistent/dir/report.json"}).err,
              HasSubstr("the directory of '/nonexistent/dir/report.json' does not exist"));
  const Outcome lr_inf = run_cli({"run", "--lr", "inf"});
  EXPECT_LT(lr_inf.err.size(), 200u) << "no 300-digit bound: " << lr_inf.err;
}

/// An integer option as --help shows it: "--workers INT in [0, 64]" or "--pid INT (1 or more)".
struct IntegerRange {
  std::string flag;
  std::int64_t low = 0;
  std::optional<std::int64_t> high;  ///< None: no upper bound.
};

std::vector<IntegerRange> integer_ranges_in_help(const std::string& subcommand) {
  const Outcome help = run_cli({subcommand, "--help"});
  EXPECT_EQ(help.status, 0) << help.err;
  std::vector<IntegerRange> ranges;
  const std::regex range(R"((--[a-z-]+) INT (in \[(-?[0-9]+), (-?[0-9]+)\]|\((-?[0-9]+) or more\)))");
  for (auto match = std::sregex_iterator(help.out.begin(), help.out.end(), range); match != std::sregex_iterator();
       ++match) {
    IntegerRange found;
    found.flag = (*match)[1].str();
    if ((*match)[3].matched) {
      found.low = std::stoll((*match)[3].str());
      found.high = std::stoll((*match)[4].str());
    } else {
      found.low = std::stoll((*match)[5].str());
    }
    ranges.push_back(found);
  }
  return ranges;
}

/// What --help says, what the error says and what the check does must agree: for every integer
/// option of every subcommand, the bounds --help shows are accepted (the check runs before
/// --help is answered, so nothing else runs), the values just past them are refused, and the
/// refusal names the same bounds.
TEST(CliInput, EveryIntegerRangeInTheHelpIsTheOneTheCheckAppliesAndTheErrorNames) {
  int checked = 0;
  for (const std::string subcommand : {"run", "demo", "watch"}) {
    for (const IntegerRange& range : integer_ranges_in_help(subcommand)) {
      const std::string context = subcommand + " " + range.flag;
      const std::string words =
          range.high ? "an integer from " + std::to_string(range.low) + " to " + std::to_string(*range.high)
                     : "an integer of " + std::to_string(range.low) + " or more";
      const Outcome below = run_cli({subcommand, range.flag, std::to_string(range.low - 1)});
      EXPECT_EQ(below.status, 2) << context << ": " << below.err;
      EXPECT_THAT(below.err, HasSubstr("(" + range.flag + " accepts " + words + ")")) << context;
      const Outcome at_low = run_cli({subcommand, range.flag, std::to_string(range.low), "--help"});
      EXPECT_EQ(at_low.status, 0) << context << ": " << at_low.err;
      if (range.high) {
        const Outcome at_high = run_cli({subcommand, range.flag, std::to_string(*range.high), "--help"});
        EXPECT_EQ(at_high.status, 0) << context << ": " << at_high.err;
        const Outcome above = run_cli({subcommand, range.flag, std::to_string(*range.high + 1)});
        EXPECT_EQ(above.status, 2) << context << ": " << above.err;
        EXPECT_THAT(above.err, HasSubstr("(" + range.flag + " accepts " + words + ")")) << context;
      }
      ++checked;
    }
  }
  // run: 9 integer options (--ranks and --master-port among them), demo: 5, watch: 12 (--pid,
  // --poll-ms, --generation-window-ms, the eight counted --max- gates, --max-copy-on-read the
  // last, and --max-worker-memory, in MiB).
  EXPECT_EQ(checked, 26) << "an integer option lost its range in --help";
}

/// The demo runs at least two epochs (the bug shows from the second) and at least one batch of
/// each kind; its errors used to quote run's ranges instead.
TEST(CliInput, TheDemosErrorsQuoteTheDemosOwnRanges) {
  EXPECT_THAT(run_cli({"demo", "--epochs", "1"}).err, HasSubstr("(--epochs accepts an integer from 2 to 1000)"));
  EXPECT_THAT(run_cli({"demo", "--limit-val-batches", "0"}).err,
              HasSubstr("(--limit-val-batches accepts an integer of 1 or more)"));
  EXPECT_THAT(run_cli({"watch", "--json", "-"}).err,
              HasSubstr("(--json accepts a file path in an existing, writable directory)"));
  EXPECT_THAT(run_cli({"run", "--json", "/tmp"}).err,
              HasSubstr("(--json accepts a file path in an existing, writable directory, or - "
                        "for stdout)"));
}

// ---- Data sets -------------------------------------------------------------------------------

/// Small train and t10k splits of 28 × 28 random pixels (random, so that gzip cannot shrink
/// them to a few bytes: a truncated stream then still holds a readable header).
class DataSetFixture {
 public:
  DataSetFixture() {
    write_split("train", 40);
    write_split("t10k", 20);
  }
  const std::string& dir() const { return dir_.path(); }
  std::string file(const std::string& name) const { return dir_.file(name); }

  void write_split(const std::string& split, std::int64_t count, std::int64_t label_count = -1,
                   std::int64_t pixels_missing = 0) {
    std::mt19937 random(static_cast<unsigned>(count));
    std::vector<std::uint8_t> pixels(static_cast<std::size_t>(count * 28 * 28 - pixels_missing));
    for (std::uint8_t& pixel : pixels) pixel = static_cast<std::uint8_t>(random());
    if (label_count < 0) label_count = count;
    std::vector<std::uint8_t> labels(static_cast<std::size_t>(label_count));
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::uint8_t>(i % 10);
    data::write_idx_file(file(split + "-images-idx3-ubyte.gz"), {count, 28, 28}, pixels);
    data::write_idx_file(file(split + "-labels-idx1-ubyte.gz"), {label_count}, labels);
  }

  void overwrite(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    std::ofstream out(file(name), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }

  std::vector<std::uint8_t> bytes_of(const std::string& name) const {
    std::ifstream in(file(name), std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
  }

 private:
  TempDir dir_;
};

/// A corrupt data set, the file its error must name, what the error must say, and whether the
/// fault is in the payload (found by the lazy load: in a worker when there are workers) or in a
/// header (found when the dataset is built, in the main process).
struct BadDataSet {
  std::string name;
  std::function<void(DataSetFixture&)> corrupt;
  std::string file;
  std::string says;
  bool in_payload;
};

std::vector<BadDataSet> bad_data_sets() {
  return {
      {"bad magic",
       [](DataSetFixture& set) {
         set.overwrite("t10k-labels-idx1-ubyte.gz", {0x12, 0x34, 0x08, 0x01, 0, 0, 0, 20});
       },
       "t10k-labels-idx1-ubyte.gz", "magic number 0x12340801", false},
      {"truncated gzip stream",
       [](DataSetFixture& set) {
         std::vector<std::uint8_t> bytes = set.bytes_of("t10k-images-idx3-ubyte.gz");
         bytes.resize(bytes.size() * 6 / 10);
         set.overwrite("t10k-images-idx3-ubyte.gz", bytes);
       },
       "t10k-images-idx3-ubyte.gz", "its gzip stream ends early", true},
      {"truncated payload", [](DataSetFixture& set) { set.write_split("t10k", 20, -1, /*pixels_missing=*/300); },
       "t10k-images-idx3-ubyte.gz", "header promises 15680 bytes of data", true},
      {"image and label count mismatch", [](DataSetFixture& set) { set.write_split("t10k", 20, /*label_count=*/19); },
       "t10k-labels-idx1-ubyte.gz", "holds 20 images but", false},
      {"empty file", [](DataSetFixture& set) { set.overwrite("train-labels-idx1-ubyte.gz", {}); },
       "train-labels-idx1-ubyte.gz", "is empty", false},
  };
}

struct WorkerSetting {
  const char* workers;
  const char* start_method;
};

std::vector<std::string> small_run(const std::string& data_dir, const WorkerSetting& setting) {
  return {"run",
          "--data",
          data_dir,
          "--workers",
          setting.workers,
          "--start-method",
          setting.start_method,
          "--epochs",
          "1",
          "--limit-train-batches",
          "2",
          "--limit-val-batches",
          "1",
          "--batch-size",
          "8",
          "--device",
          "cpu",
          "--no-progress"};
}

TEST(CliInput, EveryBadDataSetExitsOneNamingTheFileWithAndWithoutWorkers) {
  const std::vector<WorkerSetting> settings = {{"0", "fork"}, {"2", "fork"}, {"1", "spawn"}, {"2", "thread"}};
  const ProcessCensus baseline = ProcessCensus::take();
  for (const BadDataSet& bad : bad_data_sets()) {
    std::string single_process_error;
    for (const WorkerSetting& setting : settings) {
      DataSetFixture set;
      bad.corrupt(set);
      const Outcome outcome = run_cli(small_run(set.dir(), setting));
      const std::string context =
          bad.name + ", " + setting.workers + " " + setting.start_method + " workers -> " + outcome.err;
      EXPECT_EQ(outcome.status, 1) << context;
      EXPECT_EQ(lines_in(outcome.err), 1) << context;
      EXPECT_THAT(outcome.err, HasSubstr(set.file(bad.file))) << context;
      EXPECT_THAT(outcome.err, HasSubstr(bad.says)) << context;
      // The dataset's own message, without its directory, which differs from run to run.
      const std::string message = outcome.err.substr(outcome.err.find(bad.file));
      if (std::string(setting.workers) == "0") {
        single_process_error = message;
      } else {
        EXPECT_THAT(outcome.err, HasSubstr(single_process_error))
            << "the error did not cross from the worker intact: " << context;
        if (bad.in_payload) {
          EXPECT_THAT(outcome.err, HasSubstr("in DataLoader worker")) << context;
          EXPECT_THAT(outcome.err, HasSubstr("DatasetError")) << context;
        } else {
          EXPECT_THAT(outcome.err, Not(HasSubstr("in DataLoader worker"))) << context;
        }
      }
    }
  }
  const ProcessCensus after = testing::wait_for_census(baseline, 3.0);
  EXPECT_EQ(after.children, baseline.children) << "a worker outlived its failed run";
  EXPECT_EQ(after.zombies, 0);
  EXPECT_EQ(after.open_fds, baseline.open_fds);
}

TEST(CliInput, MissingDataDirectoryExitsOneNamingTheFile) {
  for (const WorkerSetting& setting : {WorkerSetting{"0", "fork"}, WorkerSetting{"2", "fork"}}) {
    const Outcome outcome = run_cli(small_run("/nonexistent/fashion-mnist", setting));
    EXPECT_EQ(outcome.status, 1) << outcome.err;
    EXPECT_EQ(lines_in(outcome.err), 1) << outcome.err;
    EXPECT_THAT(outcome.err, HasSubstr("/nonexistent/fashion-mnist/train-images-idx3-ubyte.gz"));
    EXPECT_THAT(outcome.err, HasSubstr("No such file or directory"));
  }
}

TEST(CliInput, AnIntactSmallDataSetRuns) {
  DataSetFixture set;
  const Outcome outcome = run_cli(small_run(set.dir(), {"2", "fork"}));
  EXPECT_EQ(outcome.status, 0) << outcome.err;
}

}  // namespace
}  // namespace dlreset::app
