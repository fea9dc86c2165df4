// The operating system as dlreset uses it: /proc/PID/stat as the kernel writes it and as this
// process reads it, the environment a child is started with, and a child that must die with its
// parent.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "harness/sys/child_process.h"
#include "harness/sys/clock.h"
#include "harness/sys/proc_stat.h"

namespace dlreset::sys {
namespace {

using ::testing::ElementsAre;

TEST(ProcStat, ANameWithSpacesAndParenthesesIsReadFromItsLastParenthesis) {
  const std::string text = "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 1 0 1000 1000 100 "
                           "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
  const std::optional<ProcStat> stat = parse_proc_stat(text);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->pid, 4242);
  EXPECT_EQ(stat->comm, "a (b) c");
  EXPECT_EQ(stat->parent, 17);
  EXPECT_EQ(stat->state, 'S');
  EXPECT_FALSE(stat->forked_without_exec);  // flags 0x400100: PF_FORKNOEXEC (0x40) is clear
  EXPECT_EQ(stat->minor_faults, 100);
  EXPECT_NEAR(stat->cpu_s, 200.0 / static_cast<double>(::sysconf(_SC_CLK_TCK)), 1e-9);
}

TEST(ProcStat, AForkThatRanNoExecCarriesTheKernelsFlag) {
  // flags 4194368 = 0x400140: PF_FORKNOEXEC set, as in a DataLoader fork worker.
  const std::optional<ProcStat> stat = parse_proc_stat(
      "77 (python3) R 76 76 76 0 -1 4194368 1 0 0 0 0 0 0 0 20 0 1 0 5 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 17 0\n");
  ASSERT_TRUE(stat.has_value());
  EXPECT_TRUE(stat->forked_without_exec);
}

TEST(ProcStat, ATruncatedTextIsNotAStat) { EXPECT_FALSE(parse_proc_stat("4242 (x) S 1 2").has_value()); }

TEST(ProcStat, ThisProcessReadsAsRunningWithItsParent) {
  const std::optional<ProcStat> stat = read_proc_stat_of(::getpid());
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->pid, ::getpid());
  EXPECT_EQ(stat->parent, ::getppid());
  EXPECT_EQ(stat->state, 'R');
  // It started before now, on the same clock.
  EXPECT_LE(stat->start_s, monotonic_s());
  int found = 0;
  for (const pid_t pid : list_process_ids()) found += pid == ::getpid();
  EXPECT_EQ(found, 1);
}

TEST(ChildProcess, AnOverrideReplacesTheEntryOfItsNameAndComesLast) {
  ::setenv("DLRESET_SYS_TEST_A", "old", 1);
  ::setenv("DLRESET_SYS_TEST_AB", "kept", 1);
  const std::vector<std::string> environment = environment_with({"DLRESET_SYS_TEST_A=new"});
  std::vector<std::string> ours;
  for (const std::string& entry : environment) {
    if (entry.rfind("DLRESET_SYS_TEST_", 0) == 0) ours.push_back(entry);
  }
  // A name that only begins like the override's is another variable.
  EXPECT_THAT(ours, ElementsAre("DLRESET_SYS_TEST_AB=kept", "DLRESET_SYS_TEST_A=new"));
  EXPECT_EQ(environment.back(), "DLRESET_SYS_TEST_A=new");
  // An entry without '=' names no variable: it must not take the place of every entry.
  int kept = 0;
  for (const std::string& entry : environment_with({"NO_EQUALS_SIGN"})) kept += entry == "DLRESET_SYS_TEST_AB=kept";
  EXPECT_EQ(kept, 1);
  ::unsetenv("DLRESET_SYS_TEST_A");
  ::unsetenv("DLRESET_SYS_TEST_AB");
}

TEST(ChildProcess, ExecPointersEndInNullAndPointIntoTheStrings) {
  std::vector<std::string> strings = {"/bin/true", "--x"};
  const std::vector<char*> pointers = exec_pointers(strings);
  ASSERT_EQ(pointers.size(), 3u);
  EXPECT_EQ(pointers[0], strings[0].data());
  EXPECT_EQ(pointers[1], strings[1].data());
  EXPECT_EQ(pointers[2], nullptr);
}

TEST(ChildProcess, AGrandchildDiesWithTheChildThatStartedIt) {
  // The child starts a grandchild that asks for SIGKILL at its parent's death, then exits: the
  // grandchild must end by that signal, not by its own pause running out.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const pid_t me = ::getpid();
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      if (!die_with_parent(SIGKILL, me)) ::_exit(3);
      ::sleep(30);
      ::_exit(4);
    }
    [[maybe_unused]] const ssize_t written = ::write(pipe_fds[1], &grandchild, sizeof grandchild);
    ::usleep(100 * 1000);  // time for the grandchild's prctl
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  pid_t grandchild = 0;
  ASSERT_EQ(::read(pipe_fds[0], &grandchild, sizeof grandchild), static_cast<ssize_t>(sizeof grandchild));
  ::close(pipe_fds[0]);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  // The grandchild is init's (or a subreaper's) now; it is gone when /proc no longer shows it
  // running, well before its 30 s pause.
  int polls = 0;
  for (std::optional<ProcStat> stat = read_proc_stat_of(grandchild); stat && stat->state != 'Z' && polls < 1000;
       stat = read_proc_stat_of(grandchild)) {
    ++polls;
    ::usleep(10 * 1000);
  }
  EXPECT_LT(polls, 1000) << "the grandchild outlived its parent";
}

}  // namespace
}  // namespace dlreset::sys
