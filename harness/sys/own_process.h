// What this process can read of itself: its resource use so far, and where its binary lies (the
// install prefix's bin/, or the build tree's), from which the hook, the examples and the other
// binaries are found.
#pragma once

#include <string>

namespace dlreset::sys {

/// getrusage(RUSAGE_SELF): this process's own use, its threads' included.
struct OwnUsage {
  double cpu_s = 0.0;             ///< User and system CPU time, in seconds.
  long minor_faults = 0;          ///< Pages it touched that needed no read from disk.
  long voluntary_switches = 0;    ///< Times it waited (for a lock, a read, a batch).
  long involuntary_switches = 0;  ///< Times the scheduler took the CPU from it.
};

OwnUsage own_usage();

/// The folder of this program's binary (/proc/self/exe); empty where it cannot be read.
std::string own_binary_dir();

}  // namespace dlreset::sys
