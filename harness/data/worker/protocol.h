// The messages between a DataLoader iterator and its workers, and their wire format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/data/raw_batch.h"

namespace dlreset::data {

/// PyTorch's queues carry (idx, indices), _ResumeIteration, None (exit) one way and
/// (idx, data), (idx, ExceptionWrapper), (_ResumeIteration, None) the other. These are the
/// same messages, plus the lifecycle reports that dlreset's timeline plots need.
enum class MessageType : std::uint32_t {
  // parent -> worker
  setup = 1,   ///< spawn only: the worker's configuration and dataset spec, as JSON in `text`.
  task = 2,    ///< Fetch `indices` and answer with `send_idx`.
  resume = 3,  ///< A new epoch on a persistent iterator: answer with resume_ack.
  exit = 4,    ///< Stop: skip any task still queued, then leave the loop.
  // worker -> parent
  batch = 16,           ///< The batch for `send_idx`.
  error = 17,           ///< The fetch for `send_idx` raised `error_type`: `text`.
  resume_ack = 18,      ///< The answer to resume.
  started = 19,         ///< The worker's loop began (`pid`, `time_s`).
  dataset_loaded = 20,  ///< The worker's dataset copy finished loading (`duration_s`).
  exiting = 21,         ///< The worker leaves its loop; nothing follows.
};

const char* to_string(MessageType type);

/// Lifecycle reports are consumed by the pool on the way; the iterator sees only data.
inline bool is_lifecycle(MessageType type) {
  return type == MessageType::started || type == MessageType::dataset_loaded ||
         type == MessageType::exiting;
}

struct Message {
  MessageType type = MessageType::task;
  int worker_id = -1;
  std::int64_t send_idx = -1;
  std::int64_t pid = 0;
  double time_s = 0.0;      ///< Monotonic clock, shared by all processes.
  double duration_s = 0.0;  ///< dataset_loaded: how long the load took.
  std::vector<std::int64_t> indices;  ///< task
  RawBatch batch;                     ///< batch
  std::string error_type;             ///< error
  std::string text;                   ///< error message, or setup JSON
};

/// One frame: magic, type, payload size, payload. Host byte order: both ends are this machine.
std::vector<std::uint8_t> encode(const Message& message);

/// Reassembles frames from a byte stream that arrives in arbitrary pieces.
class FrameDecoder {
 public:
  /// Room for at least `size` more bytes; write into it, then `commit` what was written.
  std::uint8_t* prepare(std::size_t size);
  void commit(std::size_t size);
  /// The next complete message, if one is buffered. Throws std::runtime_error on a corrupt
  /// stream (a frame that does not start with the magic).
  std::optional<Message> next();
  bool empty() const { return begin_ == buffer_.size() - free_; }

 private:
  std::vector<std::uint8_t> buffer_;
  std::size_t begin_ = 0;  ///< First unread byte.
  std::size_t free_ = 0;   ///< Unused bytes at the end of buffer_.
};

}  // namespace dlreset::data
