// Workers forked beside threads: where a loader's workers were started by fork while the program
// ran Python threads of its own, each worker is a copy made mid-step of them, and a lock one held
// at that moment stays held in the copy for ever. Said as a note, never a check: nothing says a
// lock was held, and most such forks go well (docs/watch.md, "Workers forked beside threads").
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "watch/analysis/python_view.h"

namespace dlreset::watch {

/// One loader whose fork workers started beside the program's own threads.
struct ForkBesideThreads {
  pid_t pid = 0;
  std::string loader;                ///< "L1"; empty where the hook did not name it.
  long iterators = 0;                ///< Its iterators whose workers were forked so.
  long workers = 0;                  ///< Their workers, all together.
  std::vector<std::string> threads;  ///< The most other threads any of them was forked beside: their names.
  std::string sentence;              ///< What the summary's note says.
};

/// Each loader whose iterator_made events (in `python`) say that fork workers started while
/// Python threads other than the iterator's own ran: multiprocessing's queue feeders and torch's
/// pin-memory threads are not counted (the hook leaves them out).
std::vector<ForkBesideThreads> forks_beside_threads(const PythonView& python);

}  // namespace dlreset::watch
