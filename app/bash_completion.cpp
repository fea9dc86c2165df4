// dlreset's bash completion, written from the CLI11 app.
#include "app/bash_completion.h"

#include <CLI/CLI.hpp>

#include <sstream>

#include "harness/cli/man_page.h"

namespace dlreset::app {

namespace {

/// The option's names, each after a space: " -h --help".
std::string names_of(const CLI::Option& option) {
  std::string names;
  for (const std::string& name : option.get_snames()) names += " -" + name;
  for (const std::string& name : option.get_lnames()) names += " --" + name;
  return names;
}

/// The words an option's value may be, from the IsMember set CLI11 names in its type
/// ("TEXT:{buggy,fixed}" gives "buggy fixed"); empty when the value is free.
std::string choices_of(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  const auto open = type.find('{');
  const auto close = type.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return {};
  std::string choices = type.substr(open + 1, close - open - 1);
  for (char& c : choices) c = c == ',' ? ' ' : c;
  return choices;
}

/// What to offer after an option that takes a value.
std::string value_reply(const CLI::Option& option) {
  if (const std::string choices = choices_of(option); !choices.empty()) {
    return "COMPREPLY=($(compgen -W \"" + choices + R"x(" -- "$cur")))x";
  }
  if (option.get_type_name().find("PATH") != std::string::npos) {
    return "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"))";
  }
  return "COMPREPLY=()";  // a number or free text: nothing to offer
}

}  // namespace

std::string bash_completion(const CLI::App& app) {
  std::string commands;
  std::ostringstream values;  // the arms of `case "$command:$prev"`
  std::ostringstream words;   // the arms of `case $command`
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string& name = command->get_name();
    commands += (commands.empty() ? "" : "|") + name;
    std::string flags;
    for (const CLI::Option* option : command->get_options(cli::shown_in_help)) {
      flags += names_of(*option);
      if (option->get_items_expected_max() == 0) continue;
      for (const std::string& flag : option->get_lnames()) {
        values << "    " << name << ":--" << flag << ") " << value_reply(*option) << "; return ;;\n";
      }
    }
    words << "    " << name << ") words=\"" << flags.substr(1) << "\" ;;\n";
  }
  std::string top_level = commands;
  for (char& c : top_level) c = c == '|' ? ' ' : c;
  for (const CLI::Option* option : app.get_options(cli::shown_in_help)) top_level += names_of(*option);

  std::ostringstream out;
  out << "# bash completion for dlreset; written by `dlreset --bash-completion`.\n"
         "_dlreset() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} command= word words\n"
         "  for word in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n"
         "    case $word in "
      << commands
      << ") command=$word; break ;; esac\n"
         "  done\n"
         "  case \"$command:$prev\" in\n"
      << values.str()
      << "  esac\n"
         "  case $command in\n"
      << words.str() << "    *) words=\"" << top_level
      << "\" ;;\n"
         "  esac\n"
         "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
         "}\n"
         "complete -F _dlreset dlreset\n";
  return out.str();
}

}  // namespace dlreset::app
