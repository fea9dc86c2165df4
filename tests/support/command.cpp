#include "tests/support/command.h"

#include <sys/wait.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "tests/support/fixtures.h"

namespace dlreset::testing {

CommandResult run_shell(const std::string& command) {
  TempDir dir;
  const std::string err_file = dir.file("stderr");
  CommandResult result;
  FILE* pipe = ::popen(("(" + command + ") 2>" + err_file).c_str(), "r");
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) result.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (FILE* err = std::fopen(err_file.c_str(), "r")) {
    while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), err)) result.err.append(buffer.data(), n);
    std::fclose(err);
  }
  return result;
}

std::string dlreset_binary() { return DLRESET_BINARY; }

std::string watch_binary() { return DLRESET_WATCH_BINARY; }

void expect_usage_errors(const std::string& command, const std::vector<UsageCase>& cases) {
  for (const auto& [arguments, named] : cases) {
    const CommandResult result = run_shell(command + " " + arguments);
    EXPECT_EQ(result.status, 2) << arguments << ": " << result.err;
    EXPECT_THAT(result.err, ::testing::HasSubstr(named)) << arguments;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << arguments << ": " << result.err;
    EXPECT_EQ(result.out, "") << arguments;
  }
}

}  // namespace dlreset::testing
