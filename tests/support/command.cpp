#include "tests/support/command.h"

#include <sys/wait.h>

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

}  // namespace dlreset::testing
