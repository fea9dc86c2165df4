// dlreset(1), written from the CLI11 app.
#include "harness/cli/man_page.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cstddef>
#include <sstream>
#include <string>

namespace dlreset::cli {

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

namespace {

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

std::string man_page(const CLI::App& app, const std::string& version, const std::string& closing_sections,
                     const std::string& synopsis) {
  std::ostringstream out;
  const auto subcommands = app.get_subcommands([](const CLI::App*) { return true; });
  std::string title = app.get_name();
  for (char& c : title) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string& description = app.get_description();
  const std::size_t colon = description.find(": ");
  out << ".TH " << roff(title) << R"( 1 "" ")" << roff(version) << "\" \"User Commands\"\n";
  out << ".SH NAME\n"
      << roff(app.get_name()) << " \\- "
      << roff(colon == std::string::npos ? description : description.substr(colon + 2)) << "\n";
  out << ".SH SYNOPSIS\n";
  if (!synopsis.empty()) out << synopsis;
  for (const CLI::App* command : subcommands) {
    out << ".B " << roff(app.get_name()) << " " << roff(command->get_name()) << "\n.RI [ options ]\n.br\n";
  }
  out << ".B " << roff(app.get_name()) << "\n.RB [ \\-\\-help | \\-\\-version ]\n";
  out << ".SH DESCRIPTION\n" << roff(description) << ".\n";
  out << ".SH OPTIONS\n";
  write_options(out, app);
  if (!subcommands.empty()) out << ".SH COMMANDS\n";
  for (const CLI::App* command : subcommands) {
    out << ".SS " << roff(command->get_name()) << "\n" << roff(command->get_description()) << ".\n";
    write_options(out, *command);
  }
  out << closing_sections;
  return out.str();
}

}  // namespace dlreset::cli
