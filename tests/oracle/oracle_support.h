// What every oracle test needs: a Python that imports real PyTorch, to run the reference script
// dlreset is compared with.
#pragma once

#include <string>

namespace dlreset::testing {

/// Debian's interpreter, for which python3-torch is installed: another python3 earlier on PATH
/// may lack torch, or have a different release of it than the LibTorch dlreset links.
inline constexpr const char* kOraclePython = "/usr/bin/python3";

/// Returns kOraclePython when it imports torch. When it cannot, records a failure of the calling
/// test that names python3-torch, or a skip where DLRESET_ORACLE=optional (a machine without it
/// on purpose), and returns "": the caller then returns at once.
///   const std::string python = testing::require_python_torch();
///   if (python.empty()) return;
std::string require_python_torch();

}  // namespace dlreset::testing
