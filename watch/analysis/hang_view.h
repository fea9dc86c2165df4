// A hang's stacks as the report shows them: each process named by its role (the program, a rank,
// a worker of which process), its threads named where their frames tell (the main thread, torch's
// pin-memory thread), and the frame each process is stuck in: its main thread's innermost.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "watch/analysis/watch_report.h"
#include "watch/tree/hang_watch.h"

namespace dlreset::watch {

/// One thread's stack, innermost frame first, each as its source wrote it.
struct ThreadStack {
  std::string name;  ///< "main thread", "pin-memory thread", "thread 0x7fc4127cc6c0", "thread 815".
  std::vector<std::string> frames;
};

/// One process of a hung program.
struct ProcessHang {
  pid_t pid = 0;
  std::string role;                  ///< "the program", "worker of pid 812", "rank 1", "process".
  std::string source;                ///< ProcessStacks::source; empty: no stacks.
  std::vector<ThreadStack> threads;  ///< The main thread first.
  std::string stuck_in;  ///< Its main thread's innermost frame: "wait (/usr/lib/python3.11/threading.py, line 320)".
  /// Python: the innermost frame of the main thread outside Python's and the packages' own files
  /// (the program's line that called what is stuck); empty where that is stuck_in, or none.
  std::string called_from;
  std::string why_none;  ///< Where there are no stacks: why.
};

/// Splits what faulthandler, eu-stack or gdb wrote for one process into its threads.
std::vector<ThreadStack> split_threads(const ProcessStacks& stacks);

/// The innermost frame of a thread, in words: a Python frame as "FUNCTION (FILE, line N)", a
/// native one as its function's name.
std::string frame_words(const std::string& frame);

/// Every process of the hang, the one the hang names first, then in pid order.
std::vector<ProcessHang> describe_hang(const WatchReport& report, const HangRecord& hang);

/// What the hang sign says: "pass 1 of I1 in pid 812 handed out no batch for 2.4 s (after 16
/// batches)", or "the tree used no CPU for 2.1 s".
std::string hang_words(const HangSign& sign);

/// The hang's lines in the summary: the sign, what the watch did, and each process with the frame
/// it is stuck in; with `stacks`, each process's threads and their frames after it.
std::string hang_text(const WatchReport& report, const HangRecord& hang, bool stacks);

}  // namespace dlreset::watch
