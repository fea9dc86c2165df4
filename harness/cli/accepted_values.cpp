#include "harness/cli/accepted_values.h"

#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <utility>

namespace dlreset::cli {

namespace {

/// CLI11's own Range and PositiveNumber checks let through what strtod and strtoull accept
/// ("nan", "-1" as an unsigned seed, values past 2^64) and print a bound of 300 digits for a
/// double; these checks read the whole text strictly and say only what was wrong with it,
/// leaving what the flag accepts to the words kept beside them.
std::string rejected(const std::string& text) { return "'" + text + "' is not a valid value"; }

/// A finite number, read strictly, that `in_range` accepts.
CLI::Validator finite_number_check(bool (*in_range)(double, double), double bound, const char* name) {
  return CLI::Validator(
      [in_range, bound](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value) ||
            !in_range(value, bound)) {
          return rejected(text);
        }
        return {};
      },
      "", name);
}

/// CLI11 hands a path option the next word even when that word is another flag: `--json
/// --no-progress` would write the report to a file named "--no-progress" after a whole fit.
std::string path_problem(const std::string& text) {
  if (text.empty()) return "an empty path is not valid";
  if (text.rfind("--", 0) == 0) {
    return "'" + text + "' is a flag, not a path: the path is missing (write ./" + text + " for a file so named)";
  }
  return {};
}

std::string output_file_problem(const std::string& text, bool stdout_allowed) {
  if (text == "-") {
    return stdout_allowed ? std::string() : "'-' is not a file: the watched program's output goes to stdout";
  }
  if (std::string problem = path_problem(text); !problem.empty()) return problem;
  const std::filesystem::path path(text);
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return "'" + text + "' is a directory";
  const std::filesystem::path parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(parent, error)) {
    return "the directory of '" + text + "' does not exist";
  }
  if (::access(parent.c_str(), W_OK) != 0) return "the directory of '" + text + "' is not writable";
  return {};
}

/// "a, b or c".
std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}

bool is_open_ended(std::int64_t high) {
  return high == std::numeric_limits<std::int64_t>::max() || high == std::numeric_limits<int>::max();
}

}  // namespace

Accepted integer_in(std::int64_t low, std::int64_t high) {
  CLI::Validator check(
      [low, high](std::string& text) -> std::string {
        std::int64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || error != std::errc() || ptr != end || value < low || value > high) {
          return rejected(text);
        }
        return {};
      },
      "", "integer_in");
  const std::string from = std::to_string(low);
  if (is_open_ended(high)) {
    return {check, "INT (" + from + " or more)", "an integer of " + from + " or more"};
  }
  const std::string to = std::to_string(high);
  return {check, "INT in [" + from + ", " + to + "]", "an integer from " + from + " to " + to};
}

Accepted unsigned_integer() {
  CLI::Validator check(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || error != std::errc() || ptr != end) return rejected(text);
        return {};
      },
      "", "unsigned_integer");
  return {check, "UINT", "an integer from 0 to 2^64 - 1"};
}

Accepted positive_finite_number() {
  return {finite_number_check([](double value, double) { return value > 0.0; }, 0.0, "positive_finite_number"),
          "FLOAT > 0", "a positive finite number"};
}

Accepted finite_number_from(double low) {
  const std::string bound = fmt::format("{:g}", low);
  return {finite_number_check([](double value, double least) { return value >= least; }, low, "finite_number_from"),
          "FLOAT >= " + bound, "a finite number of " + bound + " or more"};
}

Accepted finite_number_in(double low, double high) {
  CLI::Validator check(
      [low, high](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value) ||
            value < low || value > high) {
          return rejected(text);
        }
        return {};
      },
      "", "finite_number_in");
  const std::string from = fmt::format("{:g}", low);
  const std::string to = fmt::format("{:g}", high);
  return {check, "FLOAT in [" + from + ", " + to + "]", "a number from " + from + " to " + to};
}

Accepted one_of(const std::vector<std::string>& names) { return {CLI::IsMember(names), "", listed(names)}; }

Accepted path_to(std::string words) { return {CLI::Validator(path_problem, "PATH", "path"), "", std::move(words)}; }

Accepted output_file(bool stdout_allowed) {
  CLI::Validator check([stdout_allowed](std::string& text) { return output_file_problem(text, stdout_allowed); },
                       "PATH", "output_file");
  std::string words = "a file path in an existing, writable directory";
  if (stdout_allowed) words += ", or - for stdout";
  return {check, "", std::move(words)};
}

CLI::Option* AcceptedValues::add(CLI::Option* option, Accepted accepted) {
  option->check(std::move(accepted.check));
  if (!accepted.type_name.empty()) option->type_name(accepted.type_name);
  words_[option->get_name()] = std::move(accepted.words);
  return option;
}

CLI::Option* AcceptedValues::add_shown(CLI::Option* option, Accepted accepted) {
  return add(option, std::move(accepted))->capture_default_str();
}

CLI::Option* AcceptedValues::add_switch(CLI::Option* option) {
  words_[option->get_name()] = "no value, or true or false";
  return option;
}

std::string usage_message(const CLI::ParseError& error, const AcceptedValues* accepted) {
  std::string message = error.what();
  // The flag is named first ("--workers: ...") by most errors, later by a few ("Could not
  // convert: --profiler = maybe"); a flag that is a prefix of another must not match it.
  if (accepted == nullptr) return message;
  const std::map<std::string, std::string>& words = accepted->words();
  std::string best;
  std::size_t best_at = std::string::npos;
  for (const auto& [flag, flag_words] : words) {
    for (std::size_t at = message.find(flag); at != std::string::npos; at = message.find(flag, at + 1)) {
      const std::size_t end = at + flag.size();
      const bool whole = end == message.size() || message[end] == ':' || message[end] == ' ' || message[end] == '=';
      if (whole && at < best_at) {
        best = flag;
        best_at = at;
      }
    }
  }
  if (!best.empty()) message += " (" + best + " accepts " + words.at(best) + ")";
  return message;
}

}  // namespace dlreset::cli
