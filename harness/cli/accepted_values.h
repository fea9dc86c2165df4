// What each option of the command line accepts: its check, the type --help shows, and the words
// of its error message, all made from one set of bounds or names.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace dlreset::cli {

/// The bounds a range may name for "any": read as "or more".
inline constexpr std::int64_t kNoUpperBound = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

/// One option's check and the two ways of saying what it lets through. They are made together,
/// so that a range changed in one place is changed in all three; before, a separate table of
/// words said "1 to 100000" for a flag whose check took 2 to 1000.
struct Accepted {
  CLI::Validator check;
  /// What --help and the man page show as the value's type ("INT in [0, 64]"); empty keeps
  /// CLI11's own ("TEXT:{thread,fork,spawn}", which the bash completion reads the choices from).
  std::string type_name;
  /// The end of "(--flag accepts ...)" in the error message: "an integer from 0 to 64".
  std::string words;
};

/// An integer from `low` to `high`, read strictly: all of the text, no sign where none may be,
/// no "3e2" or " 2". A `high` of int's or int64's maximum reads as "or more".
Accepted integer_in(std::int64_t low, std::int64_t high);
/// An integer from 0 to 2^64 - 1; "-1" and values past 2^64 are refused, as strtoull would not.
Accepted unsigned_integer();
/// A finite number above 0: not "nan", "inf" or "1e999".
Accepted positive_finite_number();
/// A finite number of `low` or more, read as strictly.
Accepted finite_number_from(double low);
/// A finite number from `low` to `high`, read as strictly.
Accepted finite_number_in(double low, double high);
/// One of `names`, exactly as written.
Accepted one_of(const std::vector<std::string>& names);
/// A path, which only the code that opens it can judge further; `words` says what it names.
Accepted path_to(std::string words);
/// A file to write, whose directory exists and is writable now, not after a whole fit; "-" is
/// stdout where `stdout_allowed`.
Accepted output_file(bool stdout_allowed);

/// The words of every option of one subcommand, for the one-line error of a bad value. Options
/// are added through it, so no option has a check without words or words without a check.
class AcceptedValues {
 public:
  /// Puts `accepted`'s check and type name on `option` and keeps its words.
  CLI::Option* add(CLI::Option* option, Accepted accepted);
  /// add(), with the option's default shown in --help and the man page.
  CLI::Option* add_shown(CLI::Option* option, Accepted accepted);
  /// A switch: no value, or an explicit boolean.
  CLI::Option* add_switch(CLI::Option* option);

  /// The words of every flag added, by flag ("--workers").
  const std::map<std::string, std::string>& words() const { return words_; }

 private:
  std::map<std::string, std::string> words_;
};

/// CLI11's message for a bad value, with what the flag accepts appended, so that a bad value
/// gets one line that names the flag and says what would do. `accepted` holds the words of the
/// subcommand being parsed, or is null before one is.
std::string usage_message(const CLI::ParseError& error, const AcceptedValues* accepted);

}  // namespace dlreset::cli
