// One end of the Unix socket between the parent and one worker process.
#pragma once

#include <functional>
#include <optional>

#include "harness/data/core/worker/transport/protocol.h"
#include "harness/sys/unique_fd.h"

namespace dlreset::data::detail {

/// Owns a connected stream socket and frames messages over it. Reads never block, so one thread
/// can wait on many channels at once; a send waits for room as its caller says. A child's death closes its end,
/// which reads as end-of-file here at once: that is how a dead worker is noticed within milliseconds, not after
/// PyTorch's 5 s status check.
class SocketChannel {
 public:
  explicit SocketChannel(int fd = -1) : fd_(fd) {}
  ~SocketChannel() { close(); }
  SocketChannel(SocketChannel&& other) noexcept;
  SocketChannel& operator=(SocketChannel&& other) noexcept;
  SocketChannel(const SocketChannel&) = delete;
  SocketChannel& operator=(const SocketChannel&) = delete;

  /// Registers the descriptor as one no forked worker may keep (parent_only_fds.h), until
  /// close(): the main process's end of a worker's channel.
  void mark_parent_only();

  int fd() const { return fd_.get(); }
  bool open() const { return fd_.get() >= 0; }
  /// True once the peer closed its end (or the channel was closed here).
  bool at_eof() const { return eof_; }

  /// What a sender does while the socket is full: wait until there may be room, and return
  /// true, or give the message up by returning false. The main process reads its workers'
  /// channels meanwhile: a worker blocked sending it a batch would never read this message.
  using WaitForRoom = std::function<bool()>;
  /// Sends one whole message. Returns false if the peer is gone or `wait_for_room` gave the
  /// message up; the stream then holds part of a frame, so the channel must be closed. Without
  /// `wait_for_room`, waits for room as long as it takes.
  bool send(const Message& message, const WaitForRoom& wait_for_room = {});
  /// Reads whatever has arrived, without blocking. Returns false once the peer has closed its
  /// end and everything it sent has been read into the buffer.
  bool read_available();
  /// The next complete buffered message.
  std::optional<Message> pop() { return decoder_.next(); }
  /// Where the features of batches that came in their message live.
  const BlockPool& feature_pool() const { return decoder_.feature_pool(); }
  /// Waits up to `timeout_ms` (-1: forever) for something to read. True if readable or closed.
  bool wait_readable(int timeout_ms) const;
  void close();

 private:
  sys::UniqueFd fd_;
  bool eof_ = false;
  bool parent_only_ = false;
  FrameDecoder decoder_;
  /// The frame being sent; its head buffer is kept for the next one.
  EncodedFrame frame_;
};

}  // namespace dlreset::data::detail
