#include "tests/support/python_torch.h"

#include <cstdlib>

#include "tests/support/command.h"

namespace dlreset::testing {

const std::string& python_torch_missing() {
  static const std::string missing = [] {
    const CommandResult result = run_shell(std::string(kPython) + " -c 'import torch'");
    if (result.status == 0) return std::string();
    return std::string(kPython) + " cannot import torch: install Debian's python3-torch " +
           "(ci/install-deps.sh does). It said: " + result.err;
  }();
  return missing;
}

bool oracle_optional() {
  const char* value = std::getenv("DLRESET_ORACLE");
  return value != nullptr && std::string(value) == "optional";
}

}  // namespace dlreset::testing
