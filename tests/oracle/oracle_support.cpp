#include "tests/oracle/oracle_support.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/support/command.h"

namespace dlreset::testing {

std::string require_python_torch() {
  const CommandResult probe = run_shell(std::string(kOraclePython) + " -c 'import torch'");
  if (probe.status == 0) return kOraclePython;
  // The last line of a traceback says what went wrong ("No module named 'torch'").
  std::string error = probe.err.substr(0, probe.err.find_last_not_of(" \n") + 1);
  error = error.substr(error.find_last_of('\n') + 1);
  const std::string reason = std::string(kOraclePython) + " cannot import torch (exit status " +
                             std::to_string(probe.status) + ": " + error +
                             "), so dlreset cannot be compared with real PyTorch";
  const char* oracle = std::getenv("DLRESET_ORACLE");
  if (oracle != nullptr && std::string(oracle) == "optional") {
    // GTEST_SKIP returns from the function it is in, which must return void.
    [&] { GTEST_SKIP() << reason << "; skipped because DLRESET_ORACLE=optional."; }();
  } else {
    ADD_FAILURE() << reason << ". Install Debian's python3-torch (ci/install-deps.sh does), or set "
                  << "DLRESET_ORACLE=optional to skip the oracle tests on a machine without it.";
  }
  return "";
}

}  // namespace dlreset::testing
