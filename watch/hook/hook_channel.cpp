#include "watch/hook/hook_channel.h"

#include "harness/sys/own_process.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

namespace dlreset::watch {

namespace {

/// The socket's receive buffer. A hook never waits for the watcher, so a burst the watcher has
/// not read yet must fit: a stack of 64 frames is some 10 KiB, and 4 MiB holds hundreds.
constexpr int kHookReceiveBufferBytes = 4 << 20;

/// The hook's private package beside its sitecustomize.py (watch/hook/python/_dlreset_hook/),
/// which the bootstrap loads its channel, state and patches from.
constexpr const char* kHookPackage = "_dlreset_hook";

/// The largest datagram read: the hook keeps its events far below this.
constexpr std::size_t kMaxDatagramBytes = 1 << 20;

}  // namespace

std::optional<std::string> find_hook_dir() {
  std::filesystem::path dir;
  if (const char* override_dir = std::getenv("DLRESET_WATCH_HOOK_DIR"); override_dir != nullptr && *override_dir) {
    dir = override_dir;
  } else {
    const std::string bin = sys::own_binary_dir();
    if (bin.empty()) return std::nullopt;
    dir = std::filesystem::path(bin).parent_path() / "share" / "dlreset" / "python";
  }
  std::error_code error;
  if (!std::filesystem::is_regular_file(dir / "sitecustomize.py", error) ||
      !std::filesystem::is_regular_file(dir / kHookPackage / "__init__.py", error)) {
    return std::nullopt;
  }
  return std::filesystem::weakly_canonical(dir, error).string();
}

std::unique_ptr<HookChannel> HookChannel::open(std::string& why_not) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/dlreset-watch-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    why_not = "cannot make a directory for its socket under " + pattern.substr(0, pattern.rfind('/')) + ": " +
              std::strerror(errno);
    return nullptr;
  }
  const std::string path = pattern + "/events";
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) {
    ::rmdir(pattern.c_str());
    why_not = "its socket's path '" + path + "' is too long for a Unix socket; set TMPDIR to a shorter directory";
    return nullptr;
  }
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    ::rmdir(pattern.c_str());
    why_not = std::string("cannot open a Unix datagram socket: ") + std::strerror(errno);
    return nullptr;
  }
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    why_not = "cannot bind its socket '" + path + "': " + std::strerror(errno);
    ::close(fd);
    ::rmdir(pattern.c_str());
    return nullptr;
  }
  // As root the limit of net.core.rmem_max does not apply; otherwise take what is allowed.
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &kHookReceiveBufferBytes, sizeof kHookReceiveBufferBytes) != 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kHookReceiveBufferBytes, sizeof kHookReceiveBufferBytes);
  }
  return std::unique_ptr<HookChannel>(new HookChannel(fd, pattern, path));
}

HookChannel::HookChannel(int fd, std::string directory, std::string path)
    : fd_(fd), directory_(std::move(directory)), path_(std::move(path)), buffer_(kMaxDatagramBytes) {}

HookChannel::~HookChannel() {
  ::close(fd_);
  ::unlink(path_.c_str());
  ::unlink(stacks_path().c_str());
  ::rmdir(directory_.c_str());
}

void HookChannel::drain(std::vector<HookEvent>& events, double now_s) {
  for (;;) {
    const ssize_t got = ::recv(fd_, buffer_.data(), buffer_.size(), MSG_TRUNC);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return;  // EAGAIN: nothing more now
    if (static_cast<std::size_t>(got) > buffer_.size()) {
      ++malformed_;
      continue;
    }
    if (std::optional<HookEvent> event =
            parse_hook_event(std::string_view(buffer_.data(), static_cast<std::size_t>(got)), now_s)) {
      events.push_back(std::move(*event));
    } else {
      ++malformed_;
    }
  }
}

std::vector<std::string> hook_environment(const std::string& hook_dir, const std::string& socket_path) {
  std::string pythonpath = hook_dir;
  if (const char* own = std::getenv("PYTHONPATH"); own != nullptr && *own) pythonpath += std::string(":") + own;
  return {"PYTHONPATH=" + pythonpath, std::string(kHookSocketVariable) + "=" + socket_path};
}

}  // namespace dlreset::watch
