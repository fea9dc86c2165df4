// The hang watchdog's rules on made-up ticks and hook events (watch/tree/hang_watch.h), and the
// reading of the stacks faulthandler, eu-stack and gdb write (watch/analysis/hang_view.h): hangs
// are counted, each reported once until progress is seen again; and the deadline of the stacks'
// collection (watch/tree/stack_dump.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/watch/made_up_tree.h"
#include "watch/analysis/hang_view.h"
#include "watch/tree/hang_watch.h"

namespace dlreset::watch {
namespace {

HookEvent pass_event(HookEventKind kind, double time_s, long pass = 1, long batches = 0) {
  HookEvent event = hook_event(kind, time_s, 812);
  event.iterator = "I1";
  event.waits.pass = pass;
  event.waits.batches = batches;
  return event;
}

/// Looks at every tick of `step_s` from `from_s` to `to_s` with the tree's CPU at `cpu_s`;
/// returns the hangs seen.
std::vector<HangSign> look_between(HangWatch& watch, double from_s, double to_s, double cpu_s, double step_s = 0.05) {
  std::vector<HangSign> signs;
  for (double now_s = from_s; now_s <= to_s + 1e-9; now_s += step_s) {
    if (const std::optional<HangSign> sign = watch.look(now_s, cpu_s, 0, 800)) signs.push_back(*sign);
  }
  return signs;
}

TEST(HangWatch, APassWithoutABatchForTheTimeoutIsOneHangUntilItBeatsAgain) {
  HangWatch watch(2.0);
  EXPECT_DOUBLE_EQ(watch.beat_s(), 0.5);
  watch.on_hook_event(pass_event(HookEventKind::patched, 0.0));
  watch.on_hook_event(pass_event(HookEventKind::pass_begun, 0.0));
  watch.on_hook_event(pass_event(HookEventKind::pass_beat, 1.0, 1, 4));
  // Busy CPU does not count under the batch rule: only beats do. Quiet until 1 + 2 + 0.5 s.
  EXPECT_EQ(look_between(watch, 0.0, 3.45, 0.0).size(), 0u);
  std::vector<HangSign> signs = look_between(watch, 3.5, 10.0, 0.0);
  ASSERT_EQ(signs.size(), 1u);
  EXPECT_EQ(signs[0].rule, HangRule::batches);
  EXPECT_EQ(signs[0].pid, 812);
  EXPECT_EQ(signs[0].iterator, "I1");
  EXPECT_EQ(signs[0].pass, 1);
  EXPECT_EQ(signs[0].batches, 4);
  watch.on_hook_event(pass_event(HookEventKind::pass_beat, 10.0, 1, 5));
  EXPECT_EQ(look_between(watch, 10.0, 20.0, 0.0).size(), 1u);
}

TEST(HangWatch, AnEndedPassOrAnEndedProcessIsNeverHung) {
  HangWatch watch(1.0);
  watch.on_hook_event(pass_event(HookEventKind::patched, 0.0));
  watch.on_hook_event(pass_event(HookEventKind::pass_begun, 0.0, 1));
  watch.on_hook_event(pass_event(HookEventKind::pass_waits, 0.5, 1));
  watch.on_hook_event(pass_event(HookEventKind::pass_begun, 0.6, 2));
  EXPECT_EQ(watch.live_passes(), 1u);
  watch.on_exit(812);
  EXPECT_EQ(watch.live_passes(), 0u);
  EXPECT_EQ(look_between(watch, 0.0, 30.0, 0.0).size(), 0u);
}

TEST(HangWatch, WithoutTheHookATreeWithoutCpuForTheTimeoutIsOneHangUntilItRunsAgain) {
  HangWatch watch(2.0);
  double cpu_s = 0.0;
  int signs = 0;
  for (double now_s = 0.0; now_s < 30.0; now_s += 0.05) {
    if (now_s < 5.0 || (now_s > 15.0 && now_s < 16.0)) cpu_s += 0.01;  // runs, then idles twice
    const std::optional<HangSign> sign = watch.look(now_s, cpu_s, 0, 800);
    if (!sign) continue;
    ++signs;
    EXPECT_EQ(sign->rule, HangRule::cpu);
    EXPECT_EQ(sign->pid, 800);
    EXPECT_GT(sign->quiet_s, 2.0);
  }
  EXPECT_EQ(signs, 2);
}

TEST(HangWatch, AChangeOfTheTreeIsProgress) {
  HangWatch watch(1.0);
  int signs = 0;
  std::uint64_t changes = 0;
  for (double now_s = 0.0; now_s < 10.0; now_s += 0.05) {
    if (static_cast<int>(now_s * 20) % 10 == 0) ++changes;  // a fork or an exit every half second
    signs += watch.look(now_s, 0.0, changes, 800) ? 1 : 0;
  }
  EXPECT_EQ(signs, 0);
}

TEST(HangView, FaulthandlersThreadsPutTheMainThreadFirstAndNameThePinMemoryThread) {
  ProcessStacks stacks;
  stacks.pid = 812;
  stacks.source = "python";
  stacks.text =
      "Thread 0x00007fc4127cc6c0 (most recent call first):\n"
      "  File \"/usr/lib/python3/dist-packages/torch/utils/data/_utils/pin_memory.py\", line 28 in _pin_memory_loop\n"
      "  File \"/usr/lib/python3.11/threading.py\", line 975 in run\n"
      "\n"
      "Current thread 0x00007fc412a87040 (most recent call first):\n"
      "  File \"/usr/lib/python3.11/multiprocessing/connection.py\", line 930 in wait\n"
      "  File \"train.py\", line 7 in <module>\n";
  const std::vector<ThreadStack> threads = split_threads(stacks);
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0].name, "main thread");
  EXPECT_EQ(threads[0].frames.size(), 2u);
  EXPECT_EQ(threads[1].name, "pin-memory thread");
  EXPECT_EQ(frame_words(threads[0].frames[0]), "wait (/usr/lib/python3.11/multiprocessing/connection.py, line 930)");
}

TEST(HangView, NativeThreadsOfEuStackAndGdbPutTheMainThreadFirst) {
  ProcessStacks eu;
  eu.pid = 900;
  eu.source = "eu-stack";
  eu.text = "PID 900 - process\nTID 901:\n#0  0x00007fda95c3c503 futex_wait\nTID 900:\n"
            "#0  0x00007fda95c3c503 clock_nanosleep@GLIBC_2.2.5\n#1  0x00007fda95c40e53 __nanosleep\n";
  std::vector<ThreadStack> threads = split_threads(eu);
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0].name, "main thread");
  EXPECT_EQ(threads[1].name, "thread 901");
  EXPECT_EQ(frame_words(threads[0].frames[0]), "clock_nanosleep@GLIBC_2.2.5");
  ProcessStacks gdb;
  gdb.pid = 900;
  gdb.source = "gdb";
  gdb.text =
      "Thread 1 (Thread 0x7f (LWP 900) \"python3\"):\n#0  0x00007f in __futex_abstimed_wait_common64 (...) at x.c:57\n"
      "#1  0x00007f in sem_wait ()\n";
  threads = split_threads(gdb);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0].name, "main thread");
  EXPECT_EQ(threads[0].frames.size(), 2u);
  EXPECT_EQ(frame_words(threads[0].frames[0]), "__futex_abstimed_wait_common64");
}

TEST(StackCollection, ProcessesNotReachedBeforeItsDeadlineAreListedWithTheReason) {
  StackRequest request;
  request.python = {904};
  request.native = {901, 902, 903};
  request.total_s = 0.0;
  const std::vector<ProcessStacks> all = collect_stacks(request);
  ASSERT_EQ(all.size(), 4u);
  const std::string why =
      "the tree's stacks were read for 0 s, the most a hang waits for them, before this process was reached";
  int not_reached = 0;
  for (const ProcessStacks& stacks : all) {
    EXPECT_EQ(stacks.source, "") << stacks.pid;
    not_reached += stacks.why_none == why ? 1 : 0;
  }
  EXPECT_EQ(not_reached, 4);
  EXPECT_EQ(all.front().pid, 904);
}

}  // namespace
}  // namespace dlreset::watch
