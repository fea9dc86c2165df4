#include "harness/data/worker/socket_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace dlreset::data {

SocketChannel::SocketChannel(SocketChannel&& other) noexcept
    : fd_(other.fd_), eof_(other.eof_), decoder_(std::move(other.decoder_)) {
  other.fd_ = -1;
}

SocketChannel& SocketChannel::operator=(SocketChannel&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    eof_ = other.eof_;
    decoder_ = std::move(other.decoder_);
    other.fd_ = -1;
  }
  return *this;
}

bool SocketChannel::send(const Message& message) {
  if (fd_ < 0) return false;
  const std::vector<std::uint8_t> frame = encode(message);
  std::size_t sent = 0;
  while (sent < frame.size()) {
    // MSG_NOSIGNAL: a dead peer must be an error value here, not a SIGPIPE that kills us.
    const ssize_t n = ::send(fd_, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

bool SocketChannel::read_available() {
  if (fd_ < 0 || eof_) return false;
  constexpr std::size_t kChunk = 1 << 18;
  while (true) {
    std::uint8_t* into = decoder_.prepare(kChunk);
    const ssize_t n = ::recv(fd_, into, kChunk, MSG_DONTWAIT);
    if (n > 0) {
      decoder_.commit(static_cast<std::size_t>(n));
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
  if (fd_ < 0 || eof_) return true;
  pollfd entry{fd_, POLLIN, 0};
  while (true) {
    const int ready = ::poll(&entry, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    return ready != 0;
  }
}

void SocketChannel::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  eof_ = true;
}

}  // namespace dlreset::data
