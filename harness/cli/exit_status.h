// The exit statuses that every command of dlreset gives alike, whatever it runs.
#pragma once

namespace dlreset::cli {

/// A run that failed, or a report that could not be written.
inline constexpr int kExitFailure = 1;
/// A bad flag or value: the status shells and CLI11 give a usage error, so that a script can tell
/// a wrong call from a failed run.
inline constexpr int kExitUsage = 2;

}  // namespace dlreset::cli
