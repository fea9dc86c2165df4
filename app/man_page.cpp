// dlreset(1), written from the CLI11 app.
#include "app/man_page.h"

#include <CLI/CLI.hpp>

#include <sstream>

#include "app/run_options.h"

namespace dlreset::app {

namespace {

/// Text for roff: backslashes and hyphens escaped, and a line that starts with a dot or a quote
/// kept from being read as a request.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

void write_options(std::ostringstream& out, const CLI::App& app) {
  for (const CLI::Option* option : app.get_options(shown_in_help)) {
    std::string names = option->get_name(false, true);
    for (auto at = names.find(','); at != std::string::npos; at = names.find(',', at + 2)) {
      names.replace(at, 1, ", ");
    }
    out << ".TP\n.B " << roff(names);
    if (option->get_items_expected_max() > 0) out << " \\fI" << roff(option->get_type_name()) << "\\fR";
    out << "\n" << roff(option->get_description());
    if (!option->get_default_str().empty()) out << " (default: " << roff(option->get_default_str()) << ")";
    out << "\n";
  }
}

}  // namespace

bool shown_in_help(const CLI::Option* option) { return !option->get_group().empty(); }

std::string man_page(const CLI::App& app, const std::string& version) {
  std::ostringstream out;
  const auto subcommands = app.get_subcommands([](const CLI::App*) { return true; });
  out << ".TH DLRESET 1 \"\" \"" << roff(version) << "\" \"User Commands\"\n";
  out << ".SH NAME\ndlreset \\- " << roff(app.get_description().substr(app.get_description().find(':') + 2))
      << "\n";
  out << ".SH SYNOPSIS\n";
  for (const CLI::App* command : subcommands) {
    out << ".B dlreset " << roff(command->get_name()) << "\n.RI [ options ]\n.br\n";
  }
  out << ".B dlreset\n.RB [ \\-\\-help | \\-\\-version ]\n";
  out << ".SH DESCRIPTION\n" << roff(app.get_description()) << ".\n";
  out << ".SH OPTIONS\n";
  write_options(out, app);
  out << ".SH COMMANDS\n";
  for (const CLI::App* command : subcommands) {
    out << ".SS " << roff(command->get_name()) << "\n" << roff(command->get_description()) << ".\n";
    write_options(out, *command);
  }
  out << ".SH EXIT STATUS\n"
         "0 on success; 1 when a run fails (a missing or corrupt data set, a worker error); 2 for a "
         "bad flag or value; 128 + N when signal N (SIGINT: 130, SIGTERM: 143) stopped a run after "
         "its DataLoader workers were shut down.\n";
  out << ".SH ENVIRONMENT\n.TP\n.B DLRESET_TRACE_RESETS=1\n"
         "Print a Python\\-style traceback to stderr every time a loader's iterator is set to null, "
         "in any program built on dlreset's DataLoader.\n";
  out << ".SH FILES\n.TP\n.I " << roff(DLRESET_DATA_DIR) << "\n"
      << "The Fashion\\-MNIST IDX files (Debian: dataset\\-fashion\\-mnist), unless \\-\\-data names "
         "another directory.\n";
  out << ".SH SEE ALSO\nThe README and docs of dlreset, installed with it in share/doc/dlreset "
         "(/usr/share/doc/dlreset from the Debian package).\n";
  return out.str();
}

}  // namespace dlreset::app
