#include "harness/data/core/worker/transport/socket_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "harness/data/core/worker/transport/parent_only_fds.h"

namespace dlreset::data::detail {

SocketChannel::SocketChannel(SocketChannel&& other) noexcept
    : fd_(std::move(other.fd_)),
      eof_(other.eof_),
      parent_only_(std::exchange(other.parent_only_, false)),
      decoder_(std::move(other.decoder_)) {}

SocketChannel& SocketChannel::operator=(SocketChannel&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::move(other.fd_);
    eof_ = other.eof_;
    parent_only_ = std::exchange(other.parent_only_, false);
    decoder_ = std::move(other.decoder_);
  }
  return *this;
}

bool SocketChannel::send(const Message& message, const WaitForRoom& wait_for_room) {
  if (fd_.get() < 0) return false;
  encode_frame(message, frame_);
  EncodedFrame& frame = frame_;
  iovec parts[2] = {{frame.head.data(), frame.head.size()}, {const_cast<float*>(frame.features), frame.features_bytes}};
  iovec* part = parts;
  std::size_t count = frame.features_bytes > 0 ? 2 : 1;
  while (count > 0) {
    msghdr header{};
    header.msg_iov = part;
    header.msg_iovlen = count;
    // MSG_NOSIGNAL: a dead peer must be an error value here, not a SIGPIPE that kills us.
    const ssize_t n = ::sendmsg(fd_.get(), &header, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (wait_for_room) {
          if (!wait_for_room()) return false;
        } else {
          pollfd entry{fd_.get(), POLLOUT, 0};
          while (::poll(&entry, 1, -1) < 0 && errno == EINTR) {
          }
        }
        continue;
      }
      return false;
    }
    auto sent = static_cast<std::size_t>(n);
    while (count > 0 && sent >= part->iov_len) {
      sent -= part->iov_len;
      ++part;
      --count;
    }
    if (count > 0) {
      part->iov_base = static_cast<std::uint8_t*>(part->iov_base) + sent;
      part->iov_len -= sent;
    }
  }
  return true;
}

bool SocketChannel::read_available() {
  if (fd_.get() < 0 || eof_) return false;
  constexpr std::size_t kChunk = 1 << 16;
  while (true) {
    const auto [into, room] = decoder_.writable(kChunk);
    const ssize_t n = ::recv(fd_.get(), into, room, MSG_DONTWAIT);
    if (n > 0) {
      decoder_.commit(static_cast<std::size_t>(n));
      // A short read drained the socket: asking again would only be told EAGAIN, one system
      // call per message for nothing. What arrives later wakes the caller's poll.
      if (static_cast<std::size_t>(n) < room) return true;
      continue;
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    eof_ = true;  // ECONNRESET and friends: the peer is gone
    return false;
  }
}

bool SocketChannel::wait_readable(int timeout_ms) const {
  if (fd_.get() < 0 || eof_) return true;
  pollfd entry{fd_.get(), POLLIN, 0};
  while (true) {
    const int ready = ::poll(&entry, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    return ready != 0;
  }
}

void SocketChannel::mark_parent_only() {
  if (fd_.get() >= 0 && !parent_only_) {
    register_parent_only_fd(fd_.get());
    parent_only_ = true;
  }
}

void SocketChannel::close() {
  if (fd_.get() >= 0) {
    // Before the close: a descriptor that a dataset opens next may get the same number.
    if (parent_only_) unregister_parent_only_fd(fd_.get());
    parent_only_ = false;
    fd_.reset();
  }
  eof_ = true;
}

}  // namespace dlreset::data::detail
