// Debian's python3-torch, which the oracle and watch tests run as the real thing.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace dlreset::testing {

/// Debian's interpreter, which has python3-torch; another python3 earlier on PATH may not.
constexpr const char* kPython = "/usr/bin/python3";

/// Empty when kPython imports torch; otherwise a sentence that says so and names the package.
/// Asks once per process.
const std::string& python_torch_missing();

/// DLRESET_ORACLE=optional: oracle tests skip, rather than fail, where torch is missing. CI
/// never sets it.
bool oracle_optional();

}  // namespace dlreset::testing

/// Fails the test where python3-torch is missing.
#define DLRESET_REQUIRE_PYTHON_TORCH()                                               \
  do {                                                                               \
    const std::string& dlreset_missing = ::dlreset::testing::python_torch_missing(); \
    if (!dlreset_missing.empty()) FAIL() << dlreset_missing;                         \
  } while (false)

/// As DLRESET_REQUIRE_PYTHON_TORCH, but skips instead under DLRESET_ORACLE=optional.
#define DLRESET_REQUIRE_ORACLE()                                                     \
  do {                                                                               \
    const std::string& dlreset_missing = ::dlreset::testing::python_torch_missing(); \
    if (!dlreset_missing.empty()) {                                                  \
      if (::dlreset::testing::oracle_optional()) GTEST_SKIP() << dlreset_missing;    \
      FAIL() << dlreset_missing << " (DLRESET_ORACLE=optional would skip instead.)"; \
    }                                                                                \
  } while (false)
