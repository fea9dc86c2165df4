// The table of the watch's checks: one row a check, each defined in its own file beside this one.
// The findings run them in this order, and the summary, the JSON, the gates and the command's
// --max-* flags list them in it. docs/design.md, "Adding a check", says what a new one touches.
#pragma once

#include <vector>

#include "watch/analysis/checks/check_spec.h"

namespace dlreset::watch {

CheckSpec respawns_check();         // respawns.cpp
CheckSpec live_workers_check();     // live_workers.cpp
CheckSpec leaked_workers_check();   // leaked_workers.cpp
CheckSpec extra_iterators_check();  // extra_iterators.cpp
CheckSpec late_set_epoch_check();   // late_set_epoch.cpp
CheckSpec input_wait_check();       // input_wait.cpp
CheckSpec first_batch_s_check();    // input_wait.cpp, after input_wait_check, whose measure it reads
CheckSpec worker_deaths_check();    // worker_deaths.cpp
CheckSpec fd_growth_check();        // fd_growth.cpp
CheckSpec worker_memory_check();    // worker_memory.cpp
CheckSpec copy_on_read_check();     // worker_memory.cpp, after worker_memory_check, whose samples it reads

/// Every check, in the order the report names them.
inline const std::vector<CheckSpec>& checks() {
  static const std::vector<CheckSpec> kTable = {respawns_check(),        live_workers_check(),   leaked_workers_check(),
                                                extra_iterators_check(), late_set_epoch_check(), input_wait_check(),
                                                first_batch_s_check(),   worker_deaths_check(),  fd_growth_check(),
                                                worker_memory_check(),   copy_on_read_check()};
  return kTable;
}

}  // namespace dlreset::watch
