// The messages between a DataLoader iterator and its workers, and their wire format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/data/core/memory/block_pool.h"
#include "harness/data/core/memory/raw_batch.h"

namespace dlreset::data::detail {

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
  // parent only, never on a channel
  spawned = 32,  ///< The pool launched the worker (`pid`, `time_s`): the lifecycle's first report.
};

const char* to_string(MessageType type);

/// Lifecycle reports are consumed by the pool on the way; the iterator sees only data.
inline bool is_lifecycle(MessageType type) {
  return type == MessageType::spawned || type == MessageType::started || type == MessageType::dataset_loaded ||
         type == MessageType::exiting;
}

struct Message {
  MessageType type = MessageType::task;
  int worker_id = -1;
  /// Process workers: the message's place in the one order of everything sent that way, over
  /// the socket and the shared-memory ring together (1, 2, ...; worker/transport/descriptor_ring.h).
  /// 0: not in that order (the spawn set-up, and every message of the thread back-end).
  std::int64_t seq = 0;
  std::int64_t send_idx = -1;
  std::int64_t pid = 0;
  /// task: the worker's shared-memory slot to collate the batch into (-1: none, send it in the
  /// message). batch and error: the task's slot, echoed, so the main process can free it.
  std::int32_t slot = -1;
  /// batch: how many samples lie in `slot` (worker/transport/shared_slots.h's SlotLayout); -1 when the
  /// batch travels in the message (no slot, or one too small for it).
  std::int64_t slot_samples = -1;
  double time_s = 0.0;      ///< Monotonic clock, shared by all processes.
  double duration_s = 0.0;  ///< dataset_loaded: how long the load took.
  IndexBuffer indices;      ///< task
  RawBatch batch;           ///< batch
  std::string error_type;   ///< error
  std::string text;         ///< error message, or setup JSON
};

/// One frame on the wire: a fixed header (magic, type, head size, feature count), the head (every
/// field but the features' values) and then the features' values. Host byte order: both ends
/// are this machine. The features come last so that neither end copies them on the way: the
/// sender gathers them straight from the message (`sendmsg` with two buffers) and the receiver
/// reads them straight into the new message's own buffer.
struct EncodedFrame {
  std::vector<std::uint8_t> head;   ///< The header and the head.
  const float* features = nullptr;  ///< The message's features, sent after `head`.
  std::size_t features_bytes = 0;
};

/// Encodes `message` into `frame`, reusing its head buffer: a channel encodes every message it
/// sends into one.
void encode_frame(const Message& message, EncodedFrame& frame);
/// The whole frame in one buffer (tests and tools; the socket sends EncodedFrame's two parts).
std::vector<std::uint8_t> encode(const Message& message);

/// Reassembles frames from a byte stream that arrives in arbitrary pieces.
class FrameDecoder {
 public:
  /// Where the next bytes of the stream go, and at most how many: the decoder's buffer, or,
  /// while a batch's features arrive, the message's own feature buffer. Write there, then
  /// `commit` how many bytes were written.
  std::pair<std::uint8_t*, std::size_t> writable(std::size_t want);
  void commit(std::size_t size);
  /// The next complete message, if one has arrived. Throws std::runtime_error on a corrupt
  /// stream (a frame without the magic, or with sizes no real frame has).
  std::optional<Message> next();
  /// Where the features of decoded batches live; freed batches give their blocks back to it.
  const BlockPool& feature_pool() const { return *feature_pool_; }
  /// True when no byte of an unfinished frame is held.
  bool empty() const { return !pending_ && ready_begin_ == ready_.size() && begin_ == end_; }

 private:
  /// Turns buffered bytes into messages, as far as they go.
  void parse();

  std::vector<std::uint8_t> buffer_;
  std::size_t begin_ = 0;  ///< First unread byte of buffer_.
  std::size_t end_ = 0;    ///< One past the last written byte of buffer_.
  /// A message whose head has arrived and whose features are arriving.
  std::optional<Message> pending_;
  std::size_t features_filled_ = 0;  ///< Bytes of pending_'s features written so far.
  std::vector<Message> ready_;       ///< Complete messages, oldest first.
  std::shared_ptr<BlockPool> feature_pool_ = std::make_shared<BlockPool>();
  std::size_t ready_begin_ = 0;
};

}  // namespace dlreset::data::detail
