// dlreset-watch: `dlreset watch` as a program of its own, which links no LibTorch, so that a CI
// job can gate a Python training run without installing LibTorch. Same options, same report,
// same exit statuses.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "harness/cli/accepted_values.h"
#include "harness/cli/exit_status.h"
#include "harness/cli/man_page.h"
#include "watch/cli/merge_command.h"
#include "watch/cli/watch_command.h"

namespace {

int watch_main(int argc, char** argv) {
  using namespace dlreset::watch;
  using dlreset::cli::kExitUsage;
  // `dlreset-watch merge REPORT...`: the merge of a multi-node job's reports (a program named
  // merge is watched with `dlreset-watch -- merge`).
  if (argc > 1 && std::string(argv[1]) == "merge") return merge_main(argc - 1, argv + 1, "dlreset-watch merge");
  CLI::App app{kWatchDescription};
  app.name("dlreset-watch");
  const std::string version = "dlreset-watch " DLRESET_VERSION;
  app.set_version_flag("--version", version);
  // Hidden (no group): the build writes dlreset-watch.1 with it.
  app.add_flag_callback(
         "--man-page",
         [&app, &version] {
           std::cout << dlreset::cli::man_page(
               app, version, watch_man_page_sections(),
               ".B dlreset\\-watch\n.RI [ options ] \\-\\- \" COMMAND \" [ ARGS ...]\n.br\n"
               ".B dlreset\\-watch\n.RI [ options ] \\-\\-pid \" N\"\n.br\n"
               ".B dlreset\\-watch merge\n.RI [ options ] \" REPORT\" ...\n.br\n");
           throw CLI::Success();
         },
         "Print the man page (roff) and exit")
      ->group("");
  WatchCommandLine watch;
  watch.options.program_name = "dlreset-watch";
  watch.app = &app;
  add_watch_options(watch, "dlreset-watch");
  const std::vector<std::string> command_after_dashes = split_command(argc, argv, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    std::cerr << "dlreset-watch: " << dlreset::cli::usage_message(error, &watch.accepted) << "\n";
    return kExitUsage;
  }
  if (const std::optional<int> bad = finish_watch_options(watch, command_after_dashes, "dlreset-watch")) return *bad;
  return watch_command(watch.options);
}

}  // namespace

int main(int argc, char** argv) {
  // What the watch itself cannot do ends in one line and a failure, not in std::terminate.
  try {
    return watch_main(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "dlreset-watch: " << error.what() << "\n";
  } catch (...) {
    std::cerr << "dlreset-watch: the watch stopped at an error that says nothing of itself.\n";
  }
  return dlreset::cli::kExitFailure;
}
