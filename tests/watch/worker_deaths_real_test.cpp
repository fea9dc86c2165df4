// Workers killed by a signal under the watcher (tests/watch/bug_class/worker_death.py), each
// with its twin that does not die: a `kill -9` from another process, big batches in a small
// /dev/shm (a mount namespace of its own), and a worker's sample too big for a memory-limited
// cgroup. The watcher must say what ran out, or that the signal came from outside; the twin
// must give no finding. Where the machine refuses a namespace or a cgroup, the case is skipped
// with the reason, never passed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/command.h"
#include "tests/support/fixtures.h"
#include "tests/support/python_torch.h"
#include "tests/watch/watch_json.h"
#include "tests/watch/watched.h"

namespace dlreset::watch {
namespace {

using ::testing::HasSubstr;

class WorkerDeath : public ::testing::Test {
 protected:
  /// Watches worker_death.py's `death_case` (as fixed where `fixed`), run by `wrap`: a shell
  /// command with %s where the program's command goes ("%s" alone: as it is).
  Watched watch_case(const std::string& death_case, bool fixed, const std::string& wrap = "%s") {
    std::string command = wrap;
    command.replace(command.find("%s"), 2,
                    watch_test_program("bug_class/worker_death.py --case " + death_case + (fixed ? " --fixed" : "")));
    return watch_command(dir_.file(death_case + (fixed ? "-fixed.json" : ".json")), "--no-live --epoch-regex '^Epoch'",
                         command);
  }

  /// The bug gives one death of `cause`, whose sentence says `says`; the twin none, and succeeds.
  void expect_death(const std::string& death_case, const std::string& cause, const std::vector<std::string>& says,
                    const std::string& wrap = "%s") {
    const Watched bug = watch_case(death_case, false, wrap);
    ASSERT_FALSE(bug.report.empty()) << bug.result.err;
    EXPECT_EQ(check_counts(bug.report)["worker_deaths"], 1) << bug.result.err;
    ASSERT_EQ(bug.report["worker_deaths"].size(), 1u) << bug.result.err;
    EXPECT_EQ(bug.report["worker_deaths"][0]["cause"], cause) << bug.result.err;
    for (const std::string& words : says) EXPECT_THAT(bug.result.err, HasSubstr(words));
    const Watched fixed = watch_case(death_case, true, wrap);
    ASSERT_FALSE(fixed.report.empty()) << fixed.result.err;
    EXPECT_EQ(check_counts(fixed.report)["worker_deaths"], 0) << fixed.result.err;
    EXPECT_EQ(fixed.report["worker_deaths"].size(), 0u) << fixed.result.err;
    EXPECT_EQ(fixed.report["exit_status"], 0) << fixed.result.err;
  }

  testing::TempDir dir_;
};

TEST_F(WorkerDeath, AKillFromOutsideIsNotTheOomKiller) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  expect_death("kill", "outside",
               {"1 worker killed by a signal:", "was killed by SIGKILL at",
                "from outside the program, not the kernel's OOM killer"});
}

TEST_F(WorkerDeath, BigBatchesInASmallDevShmAreABusErrorThatSaysHowFullItWas) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const std::string mount = "mount -t tmpfs -o size=8m tmpfs /dev/shm";
  const testing::CommandResult probe = testing::run_shell("unshare -m sh -c '" + mount + "'");
  if (probe.status != 0) {
    GTEST_SKIP() << "a mount namespace with a small /dev/shm cannot be made here (unshare -m and " << mount
                 << " need root): " << probe.err;
  }
  expect_death("shm", "shm", {"was killed by SIGBUS at", "of 8 MiB)", "give the container more shared memory"},
               "unshare -m sh -c '" + mount + " && exec %s'");
}

/// A memory cgroup of its own, limited to `limit` bytes, removed at the end; `why_not` says why
/// none could be made.
class LimitedCgroup {
 public:
  explicit LimitedCgroup(long limit) {
    std::ifstream lines("/proc/self/cgroup");
    std::string v1, v2;
    for (std::string line; std::getline(lines, line);) {
      if (line.find(":memory:") != std::string::npos) v1 = line.substr(line.find(":memory:") + 8);
      if (line.rfind("0::", 0) == 0) v2 = line.substr(3);
    }
    const std::string name = "/dlreset-oom-test-" + std::to_string(::getpid());
    if (!v1.empty()) {
      path_ = "/sys/fs/cgroup/memory" + v1 + name;
      limit_file_ = "memory.limit_in_bytes";
    } else if (!v2.empty()) {
      path_ = "/sys/fs/cgroup" + v2 + name;
      limit_file_ = "memory.max";
    } else {
      why_not = "this process is in no memory cgroup (/proc/self/cgroup)";
      return;
    }
    std::error_code error;
    if (!std::filesystem::create_directory(path_, error)) {
      why_not = "cannot make the cgroup " + path_ + ": " + error.message();
      path_.clear();
      return;
    }
    if (!std::filesystem::exists(path_ + "/" + limit_file_)) {
      why_not = path_ + " has no " + limit_file_ + " (the memory controller is not enabled for it)";
      return;
    }
    std::ofstream(path_ + "/" + limit_file_) << limit;
    for (const char* swap : {"memory.memsw.limit_in_bytes", "memory.swap.max"}) {
      if (std::filesystem::exists(path_ + "/" + swap)) std::ofstream(path_ + "/" + swap) << limit;
    }
    std::ifstream written(path_ + "/" + limit_file_);
    long read_back = 0;
    if (!(written >> read_back) || read_back > limit) why_not = "cannot limit " + path_ + "/" + limit_file_;
  }
  ~LimitedCgroup() {
    if (!path_.empty()) ::rmdir(path_.c_str());
  }
  LimitedCgroup(const LimitedCgroup&) = delete;
  LimitedCgroup& operator=(const LimitedCgroup&) = delete;

  const std::string& path() const { return path_; }
  std::string why_not;

 private:
  std::string path_;
  std::string limit_file_;
};

TEST_F(WorkerDeath, ASampleTooBigForTheCgroupIsTheOomKiller) {
  DLRESET_REQUIRE_PYTHON_TORCH();
  const LimitedCgroup cgroup(600L << 20);
  if (!cgroup.why_not.empty()) GTEST_SKIP() << "no memory-limited cgroup can be made here: " << cgroup.why_not;
  // The program moves itself in before it runs Python, so that the watcher stays out of it.
  expect_death("oom", "oom",
               {"was killed by SIGKILL at", "by the kernel's OOM killer: the OOM-kill count in",
                "its last sampled memory was"},
               "sh -c 'echo $$ > " + cgroup.path() + "/cgroup.procs && exec %s'");
}

}  // namespace
}  // namespace dlreset::watch
