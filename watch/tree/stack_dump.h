// The stacks of a hung program's processes (`dlreset watch --hang-timeout`): each Python process
// with the hook writes its own threads' stacks, through faulthandler, to a file the watcher gave
// it when the watcher sends it a signal; for the others (dlreset's own C++ program, a Python run
// with -I, a process that did not answer), a tool that reads a live process's native stacks,
// elfutils' eu-stack or else gdb, found on PATH when needed.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace dlreset::watch {

/// One process's stacks, as their source wrote them.
struct ProcessStacks {
  pid_t pid = 0;
  std::string source;  ///< "python" (faulthandler), "eu-stack" or "gdb"; empty: none was had.
  std::string text;
  std::string why_none;  ///< Where source is empty: why.
};

struct StackRequest {
  std::vector<pid_t> python;  ///< Processes whose hook armed faulthandler on `signal`.
  std::vector<pid_t> native;  ///< The others.
  std::string stacks_file;    ///< The file the hooks write to.
  int signal = 0;
  /// How long a Python process may take to start writing its stacks; past it, its native stacks
  /// are read instead.
  double python_wait_s = 2.0;
  double native_timeout_s = 20.0;  ///< How long the native tool may take for one process.
  /// How long the whole collection may take: one at a time, the processes of a big tree would
  /// keep a stopped hang waiting for minutes. Those not reached by then have no stacks, and say so.
  double total_s = 30.0;
};

/// Every process's stacks, in the order asked: the Python ones first, one at a time, so that
/// their writes to the one file do not mix; each wait cut short where it would pass `total_s`.
std::vector<ProcessStacks> collect_stacks(const StackRequest& request);

/// The native stack tool found on PATH: eu-stack, else gdb; "" where neither is there.
std::string native_stack_tool();

}  // namespace dlreset::watch
