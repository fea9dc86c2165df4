// Ports tests of torch's test/test_dataloader.py (TestDataLoader, TestDataLoaderPersistentWorkers,
// TestIndividualWorkerQueue) to dlreset's DataLoader, which mirrors torch 1.13.1.
//
// Torch runs TestDataLoader's tests again in TestDataLoaderPersistentWorkers with
// persistent_workers on (its `_get_data_loader` turns it off again without workers); here every
// test is a TEST_P over both settings, under torch's name. Torch's datasets are Python classes;
// each port uses the closest dlreset mechanism: SyntheticDataset and its faults, ProbeDataset
// (whose samples say which worker made them, with that worker's seed), or a small dataset
// defined below. Spawned workers rebuild their dataset from its spec, so the few spawn cases use
// SyntheticDataset. Where a torch test leans on Python alone, its port says what it does instead.
#include <ATen/Context.h>
#include <cxxabi.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "harness/data/core/datasets/synthetic_dataset.h"
#include "harness/data/core/errors.h"
#include "harness/data/core/worker/status_check.h"
#include "harness/data/core/worker/worker_info.h"
#include "harness/data/data_loader.h"
#include "tests/support/fault_dataset.h"
#include "tests/support/fixtures.h"
#include "tests/support/probe_dataset.h"
#include "tests/support/process_census.h"

namespace dlreset::data {
namespace {

using ::dlreset::testing::FaultDataset;
using ::dlreset::testing::FaultDatasetOptions;
using ::dlreset::testing::ProcessCensus;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::StartsWith;

/// Torch's JOIN_TIMEOUT plays the same part: how long a test waits for a process before it
/// fails. It bounds failing runs only; a passing run waits for the event itself.
constexpr double kJoinTimeoutS = 20.0;

// --- The suites' parameters -------------------------------------------------------------

/// One run of a torch test: TestDataLoader (persistent off) or TestDataLoaderPersistentWorkers
/// (on), with the start method torch's default context gives on Linux (fork) unless the test
/// varies it.
struct TorchCase {
  bool persistent;
  StartMethod method;
};

std::string torch_case_name(const ::testing::TestParamInfo<TorchCase>& info) {
  return std::string(info.param.persistent ? "persistent" : "non_persistent") + "_" + to_string(info.param.method);
}

class TorchDataLoader : public ::testing::TestWithParam<TorchCase> {};
/// The tests in which torch loops over multiprocessing contexts.
class TorchDataLoaderContexts : public ::testing::TestWithParam<TorchCase> {};
class TorchIndividualWorkerQueue : public ::testing::TestWithParam<TorchCase> {};

/// torch's `_get_data_loader`: the suite's persistent_workers, turned off without workers.
std::shared_ptr<DataLoader> torch_loader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options,
                                         const TorchCase& suite) {
  options.name = "torch_port";
  options.persistent_workers = suite.persistent && options.num_workers > 0;
  options.start_method = suite.method;
  return std::make_shared<DataLoader>(std::move(dataset), std::move(options));
}

/// torch's `pin_memory_configs`: pinning is tried only where a CUDA device makes it mean
/// something (dlreset's collate, like torch's, pins nothing without one).
std::vector<bool> pin_memory_configs() {
  if (at::hasCUDA()) return {false, true};
  return {false};
}

std::shared_ptr<SyntheticDataset> synthetic(std::int64_t size, SampleShape shape = {1, 4, 4}) {
  SyntheticDatasetOptions options;
  options.size = size;
  options.sample_shape = std::move(shape);
  return std::make_shared<SyntheticDataset>(options);
}

BaseDataLoaderIter& base(const std::shared_ptr<BatchIterator>& it) { return dynamic_cast<BaseDataLoaderIter&>(*it); }

std::string demangled(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status),
                                                   &std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(type.name());
}

std::string join(const std::vector<std::int64_t>& values) {
  std::ostringstream out;
  for (std::size_t i = 0; i < values.size(); ++i) out << (i > 0 ? ", " : "") << values[i];
  return out.str();
}

/// No zombie, no child, thread or descriptor left over after a test's loaders are gone.
void expect_clean(const ProcessCensus& baseline) {
  const ProcessCensus after = testing::wait_for_census(baseline, 3.0);
  EXPECT_EQ(after.zombies, 0) << "Zombie children were left behind.";
  EXPECT_EQ(after.children, baseline.children) << "Child processes were left behind.";
  EXPECT_EQ(after.threads, baseline.threads) << "Threads were left behind.";
  EXPECT_EQ(after.open_fds, baseline.open_fds) << "Descriptors were left open.";
}

/// What `list(iter(loader))` raised: the batches it got first, and the exception.
struct Failure {
  int batches_before = 0;
  std::string type;
  std::string message;
};

Failure iterate_until_error(DataLoader& loader) {
  Failure failure;
  try {
    std::shared_ptr<BatchIterator> it = loader.iter();
    while (base(it).next_raw()) ++failure.batches_before;
    failure.type = "nothing";
  } catch (const std::exception& e) {
    failure.type = demangled(typeid(e));
    failure.message = e.what();
  }
  return failure;
}

// --- Datasets that stand for torch's Python ones -------------------------------------------

/// torch's mp.Event for forked workers: a flag in a page shared with every process forked
/// after it is made.
class SharedFlag {
 public:
  SharedFlag() {
    void* page = ::mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) throw std::runtime_error("mmap of the shared flag's page failed");
    flag_ = new (page) std::atomic<int>(0);
  }
  ~SharedFlag() { ::munmap(flag_, sizeof(std::atomic<int>)); }
  SharedFlag(const SharedFlag&) = delete;
  SharedFlag& operator=(const SharedFlag&) = delete;

  void set() { flag_->store(1); }
  bool is_set() const { return flag_->load() != 0; }

 private:
  std::atomic<int>* flag_ = nullptr;
};

/// The base of the datasets below: samples of `Shape` floats, no data to load, and a spec that
/// names a kind make_dataset does not know. They hold process-local state (a shared page, a
/// value set by worker_init_fn), so they are for thread and fork workers only, as torch's are
/// for its default (fork) context.
class TestOnlyDataset : public Dataset {
 public:
  TestOnlyDataset(std::string kind, std::int64_t size, SampleShape shape)
      : kind_(std::move(kind)), size_(size), shape_(std::move(shape)) {}
  std::int64_t size() const override { return size_; }
  SampleShape sample_shape() const override { return shape_; }
  std::string spec() const override { return "{\"kind\": \"" + kind_ + "\"}"; }

 private:
  std::string kind_;
  std::int64_t size_;
  SampleShape shape_;
};

/// torch's TestProperExitDataset: once the event is set, the last worker raises.
class ProperExitDataset : public TestOnlyDataset {
 public:
  ProperExitDataset(std::int64_t size, std::shared_ptr<SharedFlag> error_event)
      : TestOnlyDataset("proper_exit", size, {1}), error_event_(std::move(error_event)) {}
  std::int64_t get(std::int64_t index, float* features) override {
    const WorkerInfo* worker = get_worker_info();
    if (error_event_ && error_event_->is_set() && worker != nullptr && worker->id == worker->num_workers - 1) {
      throw std::runtime_error("Worker error");
    }
    features[0] = static_cast<float>(index);
    return 0;
  }
  std::unique_ptr<Dataset> clone() const override { return std::make_unique<ProperExitDataset>(*this); }

 private:
  std::shared_ptr<SharedFlag> error_event_;
};

/// torch's SegfaultDataset (`ctypes.string_at(0)`): every sample kills its process with SIGSEGV.
class SegfaultDataset : public TestOnlyDataset {
 public:
  explicit SegfaultDataset(std::int64_t size) : TestOnlyDataset("segfault", size, {1}) {}
  std::int64_t get(std::int64_t /*index*/, float* /*features*/) override {
    const WorkerInfo* worker = get_worker_info();
    if (worker == nullptr || !worker->in_own_process) {
      throw std::logic_error("SegfaultDataset needs a process worker; it would kill this process");
    }
    // The default action, so that the worker dies of the signal even where a handler waits for
    // it (AddressSanitizer's turns a SIGSEGV into a report and an exit status of 1).
    std::signal(SIGSEGV, SIG_DFL);
    ::raise(SIGSEGV);
    throw std::logic_error("SegfaultDataset's SIGSEGV did not end its worker");
  }
  std::unique_ptr<Dataset> clone() const override { return std::make_unique<SegfaultDataset>(*this); }
};

/// torch's SeedDataset, whose samples are `torch.initial_seed()`: here, the seed its worker's
/// worker_init_fn gave it (dlreset's workers run no LibTorch code, so torch's generator is
/// not theirs to seed; see test_worker_seed).
class SeedDataset : public TestOnlyDataset {
 public:
  explicit SeedDataset(std::int64_t size) : TestOnlyDataset("seed", size, {1}) {}
  std::int64_t get(std::int64_t index, float* features) override {
    features[0] = static_cast<float>(index);
    return seed_;
  }
  std::unique_ptr<Dataset> clone() const override { return std::make_unique<SeedDataset>(*this); }
  void manual_seed(std::int64_t seed) { seed_ = seed; }

 private:
  std::int64_t seed_ = -1;
};

/// torch's TestWorkerInfoDataset: samples are the [worker_id, pid] its worker_init_fn stored,
/// with the worker's seed as label; without that value (in the main process) `get` raises, as
/// torch's raises AttributeError.
class WorkerInfoDataset : public TestOnlyDataset {
 public:
  explicit WorkerInfoDataset(std::int64_t size) : TestOnlyDataset("worker_info", size, {2}) {}
  std::int64_t get(std::int64_t /*index*/, float* features) override {
    if (!value_) throw std::logic_error("WorkerInfoDataset has no value: no worker_init_fn set one");
    features[0] = static_cast<float>((*value_)[0]);
    features[1] = static_cast<float>((*value_)[1]);
    const WorkerInfo* worker = get_worker_info();
    return worker != nullptr ? static_cast<std::int64_t>(worker->seed) : -1;
  }
  std::unique_ptr<Dataset> clone() const override { return std::make_unique<WorkerInfoDataset>(*this); }
  bool has_value() const { return value_.has_value(); }
  void set_value(std::int64_t worker_id, std::int64_t pid) { value_ = {worker_id, pid}; }

 private:
  std::optional<std::array<std::int64_t, 2>> value_;
};

/// torch's ErrorIterableDataset raises in `__iter__`, which each worker calls before its first
/// item. Map-style datasets have no `__iter__`; their counterpart is the load each process does
/// on its first `get`, and that is where this one raises.
class ErrorInLoadDataset : public TestOnlyDataset {
 public:
  explicit ErrorInLoadDataset(std::int64_t size) : TestOnlyDataset("error_in_load", size, {1}) {}
  std::int64_t get(std::int64_t /*index*/, float* /*features*/) override { throw std::runtime_error("Error in load"); }
  std::unique_ptr<Dataset> clone() const override { return std::make_unique<ErrorInLoadDataset>(*this); }
};

// --- torch's ErrorTrackingProcess -----------------------------------------------------------

/// What a loader process keeps past its end: the process leaves with _exit while these are
/// still alive, as a Python traceback keeps an iterator alive until the interpreter exits.
struct Kept {
  std::shared_ptr<DataLoader> loader;
  std::shared_ptr<BatchIterator> iterator;
};

/// torch's ErrorTrackingProcess: runs `body` in a forked child, the "loader process", which
/// tells the test what it set up and, last, what it raised, one line at a time over a pipe.
/// The child reads batches with next_raw() only: a forked copy of the test process must run
/// no LibTorch op (and could not start CUDA, which is why torch's pin_memory cases need spawn).
class LoaderProcess {
 public:
  using Body = std::function<void(LoaderProcess& self, Kept& kept)>;

  explicit LoaderProcess(const Body& body) {
    int to_tester[2];
    int to_child[2];
    if (::pipe2(to_tester, O_CLOEXEC) != 0 || ::pipe2(to_child, O_CLOEXEC) != 0) {
      throw std::runtime_error("pipe2 failed for the loader process");
    }
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork of the loader process failed");
    if (pid_ == 0) {
      ::close(to_tester[0]);
      ::close(to_child[1]);
      from_child_ = to_tester[1];  // in the child: where it writes
      to_child_ = to_child[0];     // in the child: where it reads
      run_child(body);
    }
    ::close(to_tester[1]);
    ::close(to_child[0]);
    from_child_ = to_tester[0];
    to_child_ = to_child[1];
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd_ < 0) throw std::runtime_error("pidfd_open of the loader process failed");
  }

  /// torch's `finally: p.terminate()`: a loader process still there at the end is killed.
  ~LoaderProcess() {
    if (!status_) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    ::close(pidfd_);
    ::close(from_child_);
    ::close(to_child_);
  }
  LoaderProcess(const LoaderProcess&) = delete;
  LoaderProcess& operator=(const LoaderProcess&) = delete;

  pid_t pid() const { return pid_; }

  // The child's side.
  void report(std::string line) {
    std::replace(line.begin(), line.end(), '\n', ' ');
    line += '\n';
    for (std::size_t done = 0; done < line.size();) {
      const ssize_t n = ::write(from_child_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ::_exit(3);
      done += static_cast<std::size_t>(n);
    }
  }
  /// torch's `tester_setup_event.wait()`.
  void wait_for_tester() {
    char go = 0;
    while (::read(to_child_, &go, 1) < 0 && errno == EINTR) {
    }
  }

  // The test's side.
  /// The next line the child wrote; nullopt if none came within `timeout_s` or it ended first.
  std::optional<std::string> next_line(double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (true) {
      const auto newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd readable{from_child_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&readable, 1, static_cast<int>(left.count())) <= 0) {
        return std::nullopt;
      }
      char chunk[512];
      const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  /// torch's `tester_setup_event.set()`.
  void release() {
    const char go = 1;
    if (::write(to_child_, &go, 1) != 1) ADD_FAILURE() << "The loader process could not be released.";
  }
  /// torch's `p.join(timeout)`: the wait status, or nullopt if it is still running.
  std::optional<int> join(double timeout_s) {
    if (status_) return status_;
    pollfd exited{pidfd_, POLLIN, 0};
    if (::poll(&exited, 1, static_cast<int>(timeout_s * 1000)) <= 0) return std::nullopt;
    int status = 0;
    if (::waitpid(pid_, &status, 0) != pid_) return std::nullopt;
    status_ = status;
    return status_;
  }

 private:
  [[noreturn]] void run_child(const Body& body) {
    auto* kept = new Kept;  // never freed: see Kept
    int code = 0;
    try {
      body(*this, *kept);
      report("finished");
    } catch (const std::exception& e) {
      report("raised " + demangled(typeid(e)) + ": " + e.what());
      code = 1;
    } catch (...) {
      report("raised an exception that is not a std::exception");
      code = 1;
    }
    ::_exit(code);
  }

  pid_t pid_ = -1;
  int from_child_ = -1;
  int to_child_ = -1;
  int pidfd_ = -1;
  std::string buffer_;
  std::optional<int> status_;
};

std::vector<std::int64_t> parse_pids(const std::string& line, const std::string& head) {
  std::string list = line.substr(head.size());
  std::replace(list.begin(), list.end(), ',', ' ');
  std::istringstream in(list);
  std::vector<std::int64_t> pids;
  for (std::int64_t pid = 0; in >> pid;) pids.push_back(pid);
  std::sort(pids.begin(), pids.end());
  return pids;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

// --- TestDataLoaderPersistentWorkers.test_dataset_not_reset ----------------------------------

/// Torch runs this only with persistent workers: its dataset asserts `start == 0` in every
/// sample while the main process changes `start` after every epoch, which only workers that kept
/// their first copy pass. Here the non-persistent run asserts what torch's non-persistent
/// loader does instead: every epoch's new workers copy the dataset as it is then. (The 1-worker
/// check of the last batch over all three back-ends is persistent_workers_test.cpp's
/// PersistentWorkersKeepTheirDatasetCopy; this is torch's, 2 workers and every sample.)
TEST_P(TorchDataLoader, test_dataset_not_reset) {
  for (const bool pin_memory : pin_memory_configs()) {
    std::shared_ptr<SyntheticDataset> dataset = synthetic(10);  // DummyDataset: range(10)
    DataLoaderOptions options;
    options.num_workers = 2;
    options.pin_memory = pin_memory;
    std::shared_ptr<DataLoader> loader = torch_loader(dataset, options, GetParam());
    dataset->set_marker(0);  // dataset.start = 0
    double start = 0;
    for (int i = 0; i < 10; ++i) {
      const double seen_by_new_workers = start;
      std::vector<float> markers;
      std::shared_ptr<BatchIterator> it = loader->iter();
      while (std::optional<Batch> batch = it->next()) {
        for (std::int64_t j = 0; j < batch->size(); ++j) markers.push_back(batch->inputs[j][0][0][1].item<float>());
      }
      const float expected = static_cast<float>(GetParam().persistent ? 0.0 : seen_by_new_workers);
      EXPECT_EQ(markers, std::vector<float>(10, expected))
          << "Epoch " << i << " (pin_memory " << pin_memory << ") saw these markers; its workers' copy "
          << "of the dataset should say " << expected << " in all 10 samples.";
      start = i;
      dataset->set_marker(start);  // dataset.start = i
    }
    const std::int64_t spawns = loader->counters().worker_spawns;
    EXPECT_EQ(spawns, GetParam().persistent ? 2 : 20)
        << "The loader started " << spawns << " workers over 10 epochs of 2 workers.";
  }
}

// --- test_partial_workers --------------------------------------------------------------------

/// "Check that workers exit even if the iterator is not exhausted." With pin_memory (where a
/// CUDA device is present) the iterator has a pin-memory thread too; torch's
/// `pin_memory_thread.is_alive()` is the census's thread count here, which must be back where
/// it was.
TEST_P(TorchDataLoader, test_partial_workers) {
  for (const bool pin_memory : pin_memory_configs()) {
    const ProcessCensus baseline = ProcessCensus::take();
    std::vector<std::int64_t> workers;
    {
      DataLoaderOptions options;
      options.batch_size = 2;
      options.num_workers = 4;
      options.pin_memory = pin_memory;
      // `iter(self._get_data_loader(...))`: the DataLoader is a temporary, the iterator all
      // that is held; dropping both here is torch's `del loader`.
      std::shared_ptr<DataLoader> loader = torch_loader(synthetic(100), options, GetParam());
      std::shared_ptr<BatchIterator> it = loader->iter();
      workers = testing::worker_pids(it);
      ASSERT_EQ(workers.size(), 4u) << "The iterator started " << workers.size() << " workers, not 4.";
      int i = -1;
      while (it->next()) {
        if (++i == 10) break;
      }
      ASSERT_EQ(i, 10) << "The loop stopped at batch " << i << ", not at batch 10 of 50.";
    }
    const std::vector<std::int64_t> left = testing::wait_until_gone(workers, kJoinTimeoutS);
    EXPECT_TRUE(left.empty()) << "Worker process(es) " << join(left) << " did not terminate after "
                              << "the iterator was deleted mid-epoch (pin_memory " << pin_memory << ").";
    expect_clean(baseline);
  }
}

// --- test_proper_exit (map-style) ------------------------------------------------------------

enum class ExitMethod { none, loader_error, loader_kill, worker_error };

const char* exit_method_name(ExitMethod method) {
  switch (method) {
    case ExitMethod::none: return "None";
    case ExitMethod::loader_error: return "loader_error";
    case ExitMethod::loader_kill: return "loader_kill";
    case ExitMethod::worker_error: return "worker_error";
  }
  return "?";
}

struct ProperExitCase {
  bool persistent;
  bool use_workers;
  bool hold_iter_reference;
  ExitMethod exit_method;
};

std::string proper_exit_name(const ::testing::TestParamInfo<ProperExitCase>& info) {
  const ProperExitCase& c = info.param;
  std::string name = c.use_workers ? (c.persistent ? "persistent" : "non_persistent") : "no_workers";
  name += c.hold_iter_reference ? "_hold_iter_reference_" : "_no_iter_reference_";
  return name + exit_method_name(c.exit_method);
}

/// torch's loop over `itertools.product` for map-style datasets. pin_memory=True cannot apply:
/// torch runs those cases only with CUDA and a spawn context, and the loader process here is a
/// fork of the test, in which CUDA cannot start. 'worker_kill' is left out as torch leaves it
/// out ("FIXME: This sometimes hangs"); dlreset's own worker-kill tests are in
/// worker_faults_test.cpp. Without workers torch turns persistent_workers off, so those cases
/// would be the same under both suites and run once.
std::vector<ProperExitCase> proper_exit_cases() {
  std::vector<ProperExitCase> cases;
  for (const bool hold : {true, false}) {
    for (const bool persistent : {false, true}) {
      for (const ExitMethod method : {ExitMethod::none, ExitMethod::loader_error, ExitMethod::worker_error}) {
        cases.push_back({persistent, true, hold, method});
      }
    }
    for (const ExitMethod method : {ExitMethod::none, ExitMethod::loader_error, ExitMethod::loader_kill}) {
      cases.push_back({false, false, hold, method});
    }
  }
  return cases;
}

class TorchProperExit : public ::testing::TestWithParam<ProperExitCase> {};

/// torch's `_test_proper_exit`, in the loader process.
void proper_exit_loader(const ProperExitCase& c, LoaderProcess& process, Kept& kept) {
  const int num_workers = c.use_workers ? 2 : 0;
  std::shared_ptr<SharedFlag> worker_error_event;
  if (c.exit_method == ExitMethod::worker_error) worker_error_event = std::make_shared<SharedFlag>();
  DataLoaderOptions options;
  options.batch_size = 1;
  options.num_workers = num_workers;
  std::shared_ptr<DataLoader> loader = torch_loader(std::make_shared<ProperExitDataset>(12, worker_error_event),
                                                    options, {c.persistent, StartMethod::fork});
  constexpr int kErrorIt = 2;
  // "2 is the magical per-worker prefetch number": enough batches that the error comes.
  const std::int64_t needed = c.use_workers ? (kErrorIt + 2 + 1) * num_workers : kErrorIt + 1;
  if (loader->size() <= needed) throw std::logic_error("the loader has too few batches for this test");

  std::shared_ptr<BatchIterator> it = loader->iter();
  const std::vector<std::int64_t> workers = c.use_workers ? testing::worker_pids(it) : std::vector<std::int64_t>{};
  if (c.hold_iter_reference) {
    kept.loader = loader;
    kept.iterator = it;
  }
  // Python's for loop holds the iterator whatever becomes of the names `it` and `loader`.
  const std::shared_ptr<BatchIterator> loop = it;
  for (int i = 0; base(loop).next_raw(); ++i) {
    if (i == 0) {
      if (!c.hold_iter_reference) {
        it.reset();      // del it
        loader.reset();  // del loader
      }
      process.report("setup " + join(workers));  // loader_setup_event.set()
      process.wait_for_tester();
      if (testing::wait_until_dead(workers, 0.0).size() != workers.size()) {
        throw std::logic_error("a worker was not alive after the first batch");
      }
      if (worker_error_event) worker_error_event->set();
    }
    if (i == kErrorIt) {
      if (c.exit_method == ExitMethod::loader_error) throw std::runtime_error("Loader error");
      if (c.exit_method == ExitMethod::loader_kill) ::kill(::getpid(), SIGKILL);
    }
  }
}

/// "There might be ConnectionResetError or leaked semaphore warning (due to dirty process
/// exit), but they are all safe to ignore": in every case, all processes must end.
TEST_P(TorchProperExit, test_proper_exit) {
  const ProperExitCase& c = GetParam();
  const ProcessCensus baseline = ProcessCensus::take();
  std::vector<std::int64_t> workers;
  {
    LoaderProcess loader_p([&c](LoaderProcess& self, Kept& kept) { proper_exit_loader(c, self, kept); });
    const std::optional<std::string> setup = loader_p.next_line(kJoinTimeoutS);
    ASSERT_TRUE(setup && setup->rfind("setup", 0) == 0)
        << "The loader process failed to set up within " << kJoinTimeoutS << " s; it said '"
        << setup.value_or("nothing") << "'.";
    workers = parse_pids(*setup, "setup");
    EXPECT_EQ(workers.size(), c.use_workers ? 2u : 0u)
        << "The loader process reported " << workers.size() << " workers.";
    // "We are certain that the workers have started now."
    std::vector<std::int64_t> children = testing::child_pids(loader_p.pid());
    std::sort(children.begin(), children.end());
    EXPECT_EQ(children, workers) << "The loader process's children are not the workers it reported.";
    loader_p.release();

    // Torch joins after JOIN_TIMEOUT + MP_STATUS_CHECK_INTERVAL.
    const std::optional<int> status = loader_p.join(kJoinTimeoutS + detail::kStatusCheckIntervalS);
    ASSERT_TRUE(status) << "The loader process did not terminate within "
                        << kJoinTimeoutS + detail::kStatusCheckIntervalS << " s.";
    const std::vector<std::int64_t> alive = testing::wait_until_dead(workers, kJoinTimeoutS);
    EXPECT_TRUE(alive.empty()) << "Worker process(es) " << join(alive) << " did not terminate.";
    const std::string outcome = loader_p.next_line(kJoinTimeoutS).value_or("nothing");
    switch (c.exit_method) {
      case ExitMethod::none:
        EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
            << "The loader process " << describe(*status) << "; it said '" << outcome << "'.";
        EXPECT_EQ(outcome, "finished") << "The loader process did not finish its epoch cleanly.";
        break;
      case ExitMethod::loader_error:
        EXPECT_FALSE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "The loader process exited with code 0.";
        EXPECT_EQ(outcome, "raised std::runtime_error: Loader error")
            << "The loader process did not raise the loop's own error.";
        break;
      case ExitMethod::worker_error:
        EXPECT_FALSE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "The loader process exited with code 0.";
        EXPECT_THAT(outcome, StartsWith("raised dlreset::data::WorkerError: Caught std::runtime_error in "
                                        "DataLoader worker process 1 "));
        EXPECT_THAT(outcome, HasSubstr("Original message: Worker error"))
            << "The loader process did not raise the last worker's error.";
        break;
      case ExitMethod::loader_kill:
        EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL)
            << "The loader process " << describe(*status) << " instead of being killed by SIGKILL.";
        EXPECT_EQ(outcome, "nothing") << "The killed loader process still said something.";
        break;
    }
  }
  expect_clean(baseline);
}

INSTANTIATE_TEST_SUITE_P(MapStyle, TorchProperExit, ::testing::ValuesIn(proper_exit_cases()), proper_exit_name);

// --- test_segfault, test_timeout ---------------------------------------------------------------

/// torch's worker_init_fn silences stderr for this test; dlreset's workers print nothing on a
/// fatal signal, so this one turns core dumps off instead, as a dying LibTorch process would
/// write a large one where they are on. Torch runs the loader in a subprocess to keep a hang
/// from stopping its suite; dlreset's loader reports the death, so it runs here.
TEST_P(TorchDataLoader, test_segfault) {
  const ProcessCensus baseline = ProcessCensus::take();
  {
    DataLoaderOptions options;
    options.batch_size = 2;
    options.num_workers = 2;
    options.worker_init_fn = [](int /*worker_id*/) {
      const rlimit none{0, 0};
      ::setrlimit(RLIMIT_CORE, &none);
    };
    std::shared_ptr<DataLoader> loader = torch_loader(std::make_shared<SegfaultDataset>(10), options, GetParam());
    std::shared_ptr<BatchIterator> it = loader->iter();
    try {
      it->next();
      ADD_FAILURE() << "A worker's segmentation fault went unnoticed.";
    } catch (const WorkerDiedError& e) {
      EXPECT_EQ(e.signal(), SIGSEGV) << "The worker died of signal " << e.signal() << ", not SIGSEGV.";
      EXPECT_THAT(e.what(), ContainsRegex(R"(DataLoader worker \(pid [0-9]+\) is killed by signal: )"))
          << "The error does not say in torch's words which signal killed the worker.";
    }
  }
  expect_clean(baseline);
}

/// torch's SleepDataset(10, 3) sleeps 3 s in its first sample against a 1 s timeout; here the
/// first sample hangs until its worker is told to stop, so any timeout is robust and the
/// shortest that reads well is used. Torch's regex `\d+ seconds` is for its whole seconds; the
/// value here is checked as written. (HungWorkerTimesOutWithPyTorchsMessage in
/// worker_faults_test.cpp is the 1-worker case over all back-ends; this is torch's, 2 workers.)
TEST_P(TorchDataLoader, test_timeout) {
  const ProcessCensus baseline = ProcessCensus::take();
  {
    FaultDatasetOptions dataset;
    dataset.samples.size = 10;
    dataset.hang_at = 0;
    DataLoaderOptions options;
    options.batch_size = 2;
    options.num_workers = 2;
    options.timeout_s = 0.25;
    std::shared_ptr<DataLoader> loader = torch_loader(std::make_shared<FaultDataset>(dataset), options, GetParam());
    std::shared_ptr<BatchIterator> it = loader->iter();
    try {
      it->next();
      ADD_FAILURE() << "No timeout came although the first batch never arrives.";
    } catch (const DataLoaderTimeoutError& e) {
      EXPECT_THAT(e.what(), StartsWith("DataLoader timed out after 0.25 seconds"))
          << "The timeout error does not name the 0.25 s timeout in torch's words.";
    }
  }  // the hung worker must be stopped, not waited for
  expect_clean(baseline);
}

// --- test_worker_seed, test_worker_seed_reproducibility, test_worker_init_fn -------------------

/// torch's test_worker_seed and test_worker_seed_reproducibility: 6 workers, a sample each.
constexpr int kSeedWorkers = 6;

/// Every seed the loader's workers got, read from ProbeDataset's samples (one per worker).
std::multiset<std::int64_t> worker_seeds(DataLoader& loader, std::uint64_t* base_seed = nullptr) {
  std::multiset<std::int64_t> seeds;
  std::shared_ptr<BatchIterator> it = loader.iter();
  if (base_seed != nullptr) *base_seed = base(it).base_seed();
  while (std::optional<RawBatch> batch = base(it).next_raw()) seeds.insert(batch->labels.begin(), batch->labels.end());
  return seeds;
}

std::multiset<std::int64_t> consecutive(std::uint64_t first, int count) {
  std::multiset<std::int64_t> seeds;
  for (int i = 0; i < count; ++i) seeds.insert(static_cast<std::int64_t>(first + static_cast<std::uint64_t>(i)));
  return seeds;
}

/// torch's SynchronizedSeedDataset returns `torch.initial_seed()`, which the worker loop set to
/// base_seed + worker id, and a barrier makes sure each of the 6 workers serves one sample.
/// dlreset's workers run no LibTorch code (docs/design.md §4), so the seed a dataset sees is
/// get_worker_info()->seed, the value torch gives torch.manual_seed; and its round robin hands
/// worker i sample i, so no barrier is needed. Torch asserts 6 different seeds; so does this,
/// and that they are base_seed + 0..5.
TEST_P(TorchDataLoader, test_worker_seed) {
  DataLoaderOptions options;
  options.batch_size = 1;
  options.num_workers = kSeedWorkers;
  std::shared_ptr<DataLoader> loader =
      torch_loader(std::make_shared<testing::ProbeDataset>(kSeedWorkers), options, GetParam());
  std::uint64_t base_seed = 0;
  const std::multiset<std::int64_t> seeds = worker_seeds(*loader, &base_seed);
  EXPECT_EQ(std::set<std::int64_t>(seeds.begin(), seeds.end()).size(), static_cast<std::size_t>(kSeedWorkers))
      << "The 6 workers did not get 6 different seeds.";
  EXPECT_EQ(seeds, consecutive(base_seed, kSeedWorkers))
      << "The workers' seeds are not base_seed " << base_seed << " plus their ids 0 to 5.";
}

/// torch builds both loaders with `generator=torch.Generator().manual_seed(42)`, the seed mode
/// dlreset calls SeedMode::torch. Beyond torch's equality, the seeds must be real torch 1.13.1's:
/// `torch.empty((), dtype=torch.int64).random_(generator=torch.Generator().manual_seed(42))` is
/// 6909045637428952499 there, and its 6 workers' `torch.initial_seed()` that plus 0..5.
TEST_P(TorchDataLoader, test_worker_seed_reproducibility) {
  constexpr std::uint64_t kTorchBaseSeedForGenerator42 = 6909045637428952499u;
  auto get_dataloader = [this] {
    DataLoaderOptions options;
    options.batch_size = 1;
    options.num_workers = kSeedWorkers;
    options.seed_mode = SeedMode::torch;
    options.seed = 42;
    return torch_loader(std::make_shared<testing::ProbeDataset>(kSeedWorkers), options, GetParam());
  };
  const std::multiset<std::int64_t> first = worker_seeds(*get_dataloader());
  const std::multiset<std::int64_t> second = worker_seeds(*get_dataloader());
  EXPECT_EQ(first, second) << "Two loaders with the same generator seed gave their workers different seeds.";
  EXPECT_EQ(first, consecutive(kTorchBaseSeedForGenerator42, kSeedWorkers))
      << "The workers' seeds are not torch's " << kTorchBaseSeedForGenerator42 << " plus 0 to 5.";
}

/// torch's init_fn calls `torch.manual_seed(12345)` and SeedDataset returns
/// `torch.initial_seed()`: a worker_init_fn's effect on the worker's state is what every sample
/// must show. Here it seeds the worker's copy of the dataset, reached as torch's code would reach
/// it, through get_worker_info(). (worker_init_fn cannot reach spawned workers in dlreset.)
TEST_P(TorchDataLoader, test_worker_init_fn) {
  DataLoaderOptions options;
  options.batch_size = 2;
  options.num_workers = 2;
  options.worker_init_fn = [](int /*worker_id*/) {
    dynamic_cast<SeedDataset&>(*get_worker_info()->dataset).manual_seed(12345);
  };
  std::shared_ptr<DataLoader> loader = torch_loader(std::make_shared<SeedDataset>(4), options, GetParam());
  std::shared_ptr<BatchIterator> it = loader->iter();
  int batches = 0;
  while (std::optional<RawBatch> batch = base(it).next_raw()) {
    ++batches;
    const std::vector<std::int64_t> seeds(batch->labels.begin(), batch->labels.end());
    EXPECT_EQ(seeds, (std::vector<std::int64_t>{12345, 12345})) << "Batch " << batches << "'s seeds.";
  }
  EXPECT_EQ(batches, 2) << "The loader gave " << batches << " batches of 2 out of 4 samples.";
}

// --- test_get_worker_info -------------------------------------------------------------------------

/// torch's `_test_worker_info_init_fn`. It runs in the worker, where a gtest assertion would be
/// lost with the process; a failed check raises instead, which reaches the test as the first
/// batch's WorkerError, as torch's failed `assert` does.
void worker_info_init_fn(int worker_id) {
  const WorkerInfo* worker_info = get_worker_info();
  auto check = [](bool ok, const char* what) {
    if (!ok) throw std::logic_error(what);
  };
  check(worker_info != nullptr, "get_worker_info() should not be null in a worker");
  check(worker_id == worker_info->id, "worker_init_fn and worker_info should have consistent id");
  check(worker_id < worker_info->num_workers, "worker_init_fn and worker_info should have valid id");
  auto* dataset = dynamic_cast<WorkerInfoDataset*>(worker_info->dataset);
  check(dataset != nullptr, "worker_info should have correct dataset copy");
  check(!dataset->has_value(), "worker_info should have correct dataset copy");
  dataset->set_value(worker_id, ::getpid());
}

/// Torch also checks that WorkerInfo's attributes cannot be assigned, which a const WorkerInfo
/// makes a compile-time fact; and that `repr` names them, which has no C++ counterpart. Its
/// seed check, `worker_info.seed == torch.initial_seed()`, becomes: each sample's seed is
/// base_seed + its worker's id. Torch runs this in a subprocess only to be sure the main
/// process has no worker info of its own; this test process is as clean.
TEST_P(TorchDataLoader, test_get_worker_info) {
  static_assert(!std::is_assignable_v<decltype((get_worker_info()->id)), int>,
                "WorkerInfo's attributes should be read-only outside the worker loop");
  static_assert(!std::is_assignable_v<decltype((get_worker_info()->dataset)), Dataset*>,
                "WorkerInfo's attributes should be read-only outside the worker loop");
  EXPECT_EQ(get_worker_info(), nullptr) << "get_worker_info() should be null in the main process.";
  constexpr int kWorkers = 2;
  auto dataset = std::make_shared<WorkerInfoDataset>(6);
  DataLoaderOptions options;
  options.batch_size = 2;
  options.num_workers = kWorkers;
  options.worker_init_fn = worker_info_init_fn;
  std::shared_ptr<DataLoader> loader = torch_loader(dataset, options, GetParam());
  std::shared_ptr<BatchIterator> it = loader->iter();
  const std::vector<std::int64_t> pids = testing::worker_pids(it);
  ASSERT_EQ(pids.size(), static_cast<std::size_t>(kWorkers));
  const std::uint64_t base_seed = base(it).base_seed();
  int samples = 0;
  while (std::optional<RawBatch> batch = base(it).next_raw()) {
    for (std::int64_t j = 0; j < batch->size(); ++j, ++samples) {
      const auto worker_id = static_cast<std::int64_t>(batch->features[static_cast<std::size_t>(2 * j)]);
      const auto pid = static_cast<std::int64_t>(batch->features[static_cast<std::size_t>(2 * j + 1)]);
      ASSERT_TRUE(worker_id >= 0 && worker_id < kWorkers)
          << "Sample " << samples << " names worker " << worker_id << ".";
      EXPECT_EQ(pid, pids[static_cast<std::size_t>(worker_id)])
          << "Sample " << samples << " says worker " << worker_id << " has pid " << pid << ".";
      EXPECT_EQ(batch->labels[static_cast<std::size_t>(j)], static_cast<std::int64_t>(base_seed) + worker_id)
          << "Sample " << samples << " from worker " << worker_id << " carried another seed.";
    }
  }
  EXPECT_EQ(samples, 6) << "The loader gave " << samples << " of the dataset's 6 samples.";
  EXPECT_EQ(get_worker_info(), nullptr) << "get_worker_info() should be null in the main process after loading.";
  EXPECT_FALSE(dataset->has_value()) << "The main process's dataset was given a worker's value.";
  std::array<float, 2> features{};
  EXPECT_THROW(dataset->get(0, features.data()), std::logic_error)
      << "The main process's dataset served a sample without a worker's value.";
}

// --- test_multi_epochs_reproducibility -----------------------------------------------------------

/// torch's TestMultiEpochDataset is iterable: each worker yields its own id, length /
/// num_workers times. dlreset's datasets are map-style; ProbeDataset's samples carry the id of
/// the worker that made them, so the check is the same: batch i comes from worker i % 2, in
/// every epoch, persistent workers included (their reset starts the round robin over).
TEST_P(TorchDataLoader, test_multi_epochs_reproducibility) {
  constexpr int kWorkers = 2;
  constexpr int kBatchSize = 10;
  DataLoaderOptions options;
  options.batch_size = kBatchSize;
  options.shuffle = false;
  options.num_workers = kWorkers;
  std::shared_ptr<DataLoader> loader =
      torch_loader(std::make_shared<testing::ProbeDataset>(kBatchSize * kWorkers), options, GetParam());
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::shared_ptr<BatchIterator> it = loader->iter();
    int batch_idx = 0;
    for (; std::optional<RawBatch> sample = base(it).next_raw(); ++batch_idx) {
      std::vector<float> ids;
      for (std::int64_t j = 0; j < sample->size(); ++j)
        ids.push_back(sample->features[static_cast<std::size_t>(3 * j + 1)]);
      EXPECT_EQ(ids, std::vector<float>(kBatchSize, static_cast<float>(batch_idx % kWorkers)))
          << "Epoch " << epoch << ", batch " << batch_idx << " came from these workers.";
    }
    EXPECT_EQ(batch_idx, kWorkers) << "Epoch " << epoch << " had " << batch_idx << " batches.";
  }
}

// --- TestIndividualWorkerQueue.test_ind_worker_queue --------------------------------------------

/// torch's `max_num_workers`: the CPUs this process may run on (sched_getaffinity).
int max_num_workers() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  return cpus > 1 ? static_cast<int>(cpus / 2) : 1;
}

/// Torch's TestWorkerQueueDataset learns its worker id from a worker_init_fn; ProbeDataset reads
/// it from get_worker_info(). Torch's suite has no persistent twin; it runs under both here.
TEST_P(TorchIndividualWorkerQueue, test_ind_worker_queue) {
  const int workers_max = std::min(6, max_num_workers());
  for (const int batch_size : {8, 16, 32, 64}) {
    for (int num_workers = 1; num_workers <= workers_max; ++num_workers) {
      DataLoaderOptions options;
      options.batch_size = batch_size;
      options.shuffle = false;
      options.num_workers = num_workers;
      options.timeout_s = 5;
      std::shared_ptr<DataLoader> loader =
          torch_loader(std::make_shared<testing::ProbeDataset>(128), options, GetParam());
      std::shared_ptr<BatchIterator> it = loader->iter();
      int current_worker_idx = 0;
      int i = 0;
      for (; std::optional<RawBatch> batch = base(it).next_raw(); ++i) {
        std::vector<float> worker_ids;
        std::vector<float> sample;
        std::vector<float> expected_sample;
        for (std::int64_t j = 0; j < batch->size(); ++j) {
          sample.push_back(batch->features[static_cast<std::size_t>(3 * j)]);
          worker_ids.push_back(batch->features[static_cast<std::size_t>(3 * j + 1)]);
        }
        for (int k = i * batch_size; k < (i + 1) * batch_size; ++k) expected_sample.push_back(static_cast<float>(k));
        EXPECT_EQ(worker_ids,
                  std::vector<float>(static_cast<std::size_t>(batch_size), static_cast<float>(current_worker_idx)))
            << "Batch " << i << " of batch size " << batch_size << " with " << num_workers << " workers.";
        EXPECT_EQ(sample, expected_sample)
            << "Batch " << i << " of batch size " << batch_size << " with " << num_workers << " workers.";
        if (++current_worker_idx == num_workers) current_worker_idx = 0;
      }
      EXPECT_EQ(i, 128 / batch_size) << "Batch size " << batch_size << " with " << num_workers << " workers gave " << i
                                     << " batches.";
    }
  }
}

// --- test_multiple_dataloaders ------------------------------------------------------------------

/// Torch loops over [None] + the start methods; None is fork on Linux and dlreset has no
/// forkserver, so the second loader uses fork and spawn. Torch only checks that nothing fails;
/// this checks each loader's samples and that no process is left after `del`.
TEST_P(TorchDataLoaderContexts, test_multiple_dataloaders) {
  const ProcessCensus baseline = ProcessCensus::take();
  {
    std::shared_ptr<SyntheticDataset> dataset = synthetic(100);
    DataLoaderOptions one;
    one.num_workers = 1;
    DataLoaderOptions two;
    two.num_workers = 2;
    std::shared_ptr<DataLoader> loader1 = torch_loader(dataset, one, {GetParam().persistent, StartMethod::fork});
    std::shared_ptr<DataLoader> loader2 = torch_loader(dataset, two, GetParam());
    std::shared_ptr<BatchIterator> loader1_it = loader1->iter();
    std::shared_ptr<BatchIterator> loader2_it = loader2->iter();
    std::vector<std::vector<std::int64_t>> seen;
    for (const int which : {1, 1, 2, 2, 1, 2}) {
      std::optional<RawBatch> batch = base(which == 1 ? loader1_it : loader2_it).next_raw();
      ASSERT_TRUE(batch) << "Loader " << which << " ended early.";
      seen.push_back({which, batch->indices.at(0)});
    }
    EXPECT_EQ(seen, (std::vector<std::vector<std::int64_t>>{{1, 0}, {1, 1}, {2, 0}, {2, 1}, {1, 2}, {2, 2}}))
        << "Interleaved, each loader must still give its own samples in order, as {loader, index}.";
  }  // del loader1_it, del loader2_it
  expect_clean(baseline);
}

// --- TestDataLoaderPersistentWorkers.test_early_exit -----------------------------------------------

/// Torch runs a script that breaks out of the first epoch of a persistent, pinned fork loader
/// and ends, and asks for exit code 0. Here the script is a loader process whose loader goes
/// with its scope, as the script's does at interpreter exit; it reads raw batches, since a
/// forked process cannot pin (see LoaderProcess), so no pin-memory thread is started to stop.
/// Torch has it in the persistent suite only; nothing in it needs that, so both run.
TEST_P(TorchDataLoader, test_early_exit) {
  const ProcessCensus baseline = ProcessCensus::take();
  std::vector<std::int64_t> workers;
  {
    const bool persistent = GetParam().persistent;
    LoaderProcess script([persistent](LoaderProcess& self, Kept& /*kept*/) {
      DataLoaderOptions options;
      options.batch_size = 16;
      options.num_workers = 2;
      std::shared_ptr<DataLoader> dl = torch_loader(synthetic(64, {28, 28}), options,
                                                    {persistent, StartMethod::fork});  // RandomDataset(64, (28, 28))
      std::shared_ptr<BatchIterator> it = dl->iter();
      self.report("workers " + join(testing::worker_pids(it)));
      while (base(it).next_raw()) break;
    });
    const std::optional<std::string> reported = script.next_line(kJoinTimeoutS);
    ASSERT_TRUE(reported && reported->rfind("workers", 0) == 0)
        << "The script did not start its workers; it said '" << reported.value_or("nothing") << "'.";
    workers = parse_pids(*reported, "workers");
    EXPECT_EQ(workers.size(), 2u) << "The script reported " << workers.size() << " workers.";
    const std::optional<int> status = script.join(kJoinTimeoutS);
    ASSERT_TRUE(status) << "The script did not exit within " << kJoinTimeoutS << " s.";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "The script " << describe(*status) << ".";
    EXPECT_EQ(script.next_line(kJoinTimeoutS).value_or("nothing"), "finished")
        << "The script raised instead of finishing.";
  }
  const std::vector<std::int64_t> alive = testing::wait_until_dead(workers, kJoinTimeoutS);
  EXPECT_TRUE(alive.empty()) << "Worker process(es) " << join(alive) << " outlived the script.";
  expect_clean(baseline);
}

// --- test_error_in_init -----------------------------------------------------------------------------

/// `list(iter(loader))` must raise before any batch, with the error's own words, when the
/// dataset fails as a worker starts on it (and without workers), and when worker_init_fn fails.
TEST_P(TorchDataLoader, test_error_in_init) {
  for (const int num_workers : {0, 2}) {
    DataLoaderOptions options;
    options.num_workers = num_workers;
    std::shared_ptr<DataLoader> loader = torch_loader(std::make_shared<ErrorInLoadDataset>(10), options, GetParam());
    const Failure failure = iterate_until_error(*loader);
    EXPECT_EQ(failure.batches_before, 0) << "With " << num_workers << " workers, " << failure.batches_before
                                         << " batches came before the error.";
    EXPECT_EQ(failure.type, num_workers == 0 ? "std::runtime_error" : "dlreset::data::WorkerError")
        << "With " << num_workers << " workers.";
    EXPECT_THAT(failure.message, HasSubstr("Error in load")) << "With " << num_workers << " workers.";
  }

  DataLoaderOptions options;
  options.num_workers = 2;
  options.worker_init_fn = [](int /*worker_id*/) { throw std::runtime_error("Error in worker_init_fn"); };
  std::shared_ptr<DataLoader> loader = torch_loader(synthetic(100), options, GetParam());
  const Failure failure = iterate_until_error(*loader);
  EXPECT_EQ(failure.batches_before, 0) << failure.batches_before << " batches came before the error.";
  EXPECT_EQ(failure.type, "dlreset::data::WorkerError") << "worker_init_fn's error came back as another type.";
  EXPECT_THAT(failure.message, HasSubstr("Error in worker_init_fn")) << "worker_init_fn's words were lost.";
}

INSTANTIATE_TEST_SUITE_P(Torch, TorchDataLoader,
                         ::testing::Values(TorchCase{false, StartMethod::fork}, TorchCase{true, StartMethod::fork}),
                         torch_case_name);
INSTANTIATE_TEST_SUITE_P(Torch, TorchIndividualWorkerQueue,
                         ::testing::Values(TorchCase{false, StartMethod::fork}, TorchCase{true, StartMethod::fork}),
                         torch_case_name);
INSTANTIATE_TEST_SUITE_P(Torch, TorchDataLoaderContexts,
                         ::testing::Values(TorchCase{false, StartMethod::fork}, TorchCase{true, StartMethod::fork},
                                           TorchCase{false, StartMethod::spawn}, TorchCase{true, StartMethod::spawn}),
                         torch_case_name);

}  // namespace
}  // namespace dlreset::data
