// dlreset(1) and dlreset-watch(1): the man pages, written from the same CLI11 definitions as
// --help.
#pragma once

#include <string>

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's namespace, declared here
class App;
class Option;
}  // namespace CLI

namespace dlreset::cli {

/// The roff source of the man page of `app`, for `version` ("dlreset 0.4.0"): its description, its own options, and
/// every subcommand with its options, in the order --help lists them, then `closing_sections` (roff: EXIT STATUS,
/// ENVIRONMENT, FILES, SEE ALSO, as the command has them). Hidden options (no group) are left out, as --help leaves
/// them out. The build runs `dlreset --man-page` (and `dlreset-watch --man-page`) to write the pages, so a new
/// subcommand or flag is in the man page as soon as it is in --help. `synopsis` replaces the one made from the
/// subcommands.
std::string man_page(const CLI::App& app, const std::string& version, const std::string& closing_sections,
                     const std::string& synopsis = "");

/// Text for roff: backslashes and hyphens escaped, and a line that starts with a dot or a quote
/// kept from being read as a request.
std::string roff(const std::string& text);

/// Whether --help lists `option`: CLI11 hides an option whose group is empty.
bool shown_in_help(const CLI::Option* option);

}  // namespace dlreset::cli
