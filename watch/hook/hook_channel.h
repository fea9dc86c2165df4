// The watcher's end of the Python hook: a Unix datagram socket in a private directory, whose path
// the watched program's environment carries (DLRESET_WATCH_SOCKET), and the environment that puts
// the hook first on every Python process's path.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "watch/hook/hook_event.h"

namespace dlreset::watch {

/// The variable that carries the socket's path to the hook.
inline constexpr const char* kHookSocketVariable = "DLRESET_WATCH_SOCKET";
/// With --hang-timeout: "BEAT_S,SIGNAL,PATH" (watch/tree/hang_response.h).
inline constexpr const char* kHookHangVariable = "DLRESET_WATCH_HANG";

/// Where the hook's files lie, its sitecustomize.py and its package `_dlreset_hook/` beside it:
/// DLRESET_WATCH_HOOK_DIR when set, else `share/dlreset/python` beside the running binary's
/// `bin/` (the build tree has the same layout as an install). Nothing when either is not there.
std::optional<std::string> find_hook_dir();

class HookChannel {
 public:
  /// Binds the socket in a new directory under $TMPDIR (or /tmp); nothing, with the reason in
  /// `why_not`, when it cannot.
  static std::unique_ptr<HookChannel> open(std::string& why_not);
  ~HookChannel();
  HookChannel(const HookChannel&) = delete;
  HookChannel& operator=(const HookChannel&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  /// The file in the socket's directory where the hooks write their stacks for a hang
  /// (--hang-timeout); removed with the directory.
  std::string stacks_path() const { return directory_ + "/stacks"; }

  /// Reads every datagram waiting, without blocking, and appends the events it parses.
  void drain(std::vector<HookEvent>& events, double now_s);
  /// Datagrams that were not hook events.
  int malformed() const { return malformed_; }

 private:
  HookChannel(int fd, std::string directory, std::string path);

  int fd_;
  std::string directory_;
  std::string path_;
  int malformed_ = 0;
  std::vector<char> buffer_;
};

/// The environment entries that put the hook in the program's Python processes: PYTHONPATH with
/// `hook_dir` first and the program's own entries after it, and the socket's path. Each is
/// "NAME=value"; they replace the variables of the same names.
std::vector<std::string> hook_environment(const std::string& hook_dir, const std::string& socket_path);

}  // namespace dlreset::watch
