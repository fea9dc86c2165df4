// Bash completion for dlreset, written from the same CLI11 definitions as --help.
#pragma once

#include <string>

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's namespace, declared here
class App;
}

namespace dlreset::app {

/// A bash completion script for `app`: its subcommands, each one's flags, the values of a
/// flag that takes one of a set ("--variant buggy"), and file names for a path. Hidden options
/// (no group) are left out. The build runs `dlreset --bash-completion` to write it.
std::string bash_completion(const CLI::App& app);

}  // namespace dlreset::app
