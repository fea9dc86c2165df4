// dlreset(1): the man page, written from the same CLI11 definitions as --help.
#pragma once

#include <string>

namespace CLI {
class App;
class Option;
}

namespace dlreset::app {

/// The roff source of the man page of `app`, for `version` ("dlreset 0.3.0"): its description, its own options, and every
/// subcommand with its options, in the order --help lists them. Hidden options (no group) are
/// left out, as --help leaves them out. The build runs `dlreset --man-page` to write dlreset.1,
/// so a new subcommand or flag is in the man page as soon as it is in --help.
std::string man_page(const CLI::App& app, const std::string& version);

/// Whether --help lists `option`: CLI11 hides an option whose group is empty.
bool shown_in_help(const CLI::Option* option);

}  // namespace dlreset::app
