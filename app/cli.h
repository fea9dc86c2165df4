// The `dlreset` command line.
#pragma once

namespace dlreset::app {

/// Parses the command line and runs the subcommand. Exit status: 0 on success, 1 when the run
/// fails (a missing or corrupt data set, a worker error), 2 for a bad flag or value, 128 + N
/// when signal N (SIGINT: 130, SIGTERM: 143) stopped the run after its workers were shut down
/// (see SignalGuard).
int main_cli(int argc, char** argv);

}  // namespace dlreset::app
