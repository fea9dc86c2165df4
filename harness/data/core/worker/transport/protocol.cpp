#include "harness/data/core/worker/transport/protocol.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace dlreset::data::detail {

namespace {

constexpr std::uint32_t kMagic = 0x574c5244;  // "DRLW"
/// magic, type, head size, feature count.
constexpr std::size_t kHeaderSize = 4 + 4 + 8 + 8;
/// Bounds no real frame reaches (a head holds indices and an error text; a batch of 64
/// Fashion-MNIST images is 50176 floats): a corrupt size must fail, not allocate gigabytes.
constexpr std::uint64_t kMaxHeadBytes = std::uint64_t{1} << 26;
constexpr std::uint64_t kMaxFeatures = std::uint64_t{1} << 28;

class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}
  template <typename T>
  void put(const T& value) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&value);
    out_.insert(out_.end(), bytes, bytes + sizeof(T));
  }
  /// A vector, or anything else with data() and size() (a SampleShape).
  template <typename Values>
  void put_vector(const Values& values) {
    put<std::uint64_t>(values.size());
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(values.data());
    out_.insert(out_.end(), bytes, bytes + values.size() * sizeof(typename Values::value_type));
  }
  void put_string(const std::string& value) {
    put<std::uint64_t>(value.size());
    out_.insert(out_.end(), value.begin(), value.end());
  }

 private:
  std::vector<std::uint8_t>& out_;
};

class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  template <typename T>
  T get() {
    T value;
    take(&value, sizeof(T));
    return value;
  }
  template <typename T, typename Allocator = std::allocator<T>>
  std::vector<T, Allocator> get_vector() {
    const auto count = get<std::uint64_t>();
    if (count > (size_ - offset_) / sizeof(T)) throw std::runtime_error("corrupt worker message");
    std::vector<T, Allocator> values(count);
    take(values.data(), count * sizeof(T));
    return values;
  }
  std::string get_string() {
    const auto count = get<std::uint64_t>();
    if (count > size_ - offset_) throw std::runtime_error("corrupt worker message");
    std::string value(reinterpret_cast<const char*>(data_ + offset_), count);
    offset_ += count;
    return value;
  }

 private:
  void take(void* out, std::size_t size) {
    if (size > size_ - offset_) throw std::runtime_error("corrupt worker message");
    // An empty vector's data() may be null, and memcpy's pointers must never be, even for 0
    // bytes (UBSan reports it; an optimizer may assume it).
    if (size > 0) std::memcpy(out, data_ + offset_, size);
    offset_ += size;
  }
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t offset_ = 0;
};

}  // namespace

const char* to_string(MessageType type) {
  switch (type) {
    case MessageType::setup: return "setup";
    case MessageType::task: return "task";
    case MessageType::resume: return "resume";
    case MessageType::exit: return "exit";
    case MessageType::batch: return "batch";
    case MessageType::error: return "error";
    case MessageType::resume_ack: return "resume_ack";
    case MessageType::started: return "started";
    case MessageType::dataset_loaded: return "dataset_loaded";
    case MessageType::exiting: return "exiting";
    case MessageType::spawned: return "spawned";
  }
  return "unknown";
}

void encode_frame(const Message& message, EncodedFrame& frame) {
  std::vector<std::uint8_t>& out = frame.head;
  out.clear();
  out.reserve(kHeaderSize + 128 + message.indices.size() * 8 + message.batch.indices.size() * 16 + message.text.size() +
              message.error_type.size());
  Writer writer(out);
  writer.put<std::uint32_t>(kMagic);
  writer.put<std::uint32_t>(static_cast<std::uint32_t>(message.type));
  writer.put<std::uint64_t>(0);  // head size, patched below
  writer.put<std::uint64_t>(message.batch.features.size());
  writer.put<std::int32_t>(message.worker_id);
  writer.put<std::int64_t>(message.seq);
  writer.put<std::int64_t>(message.send_idx);
  writer.put<std::int64_t>(message.pid);
  writer.put<std::int32_t>(message.slot);
  writer.put<std::int64_t>(message.slot_samples);
  writer.put<double>(message.time_s);
  writer.put<double>(message.duration_s);
  writer.put_vector(message.indices);
  writer.put_vector(message.batch.indices);
  writer.put_vector(message.batch.labels);
  writer.put_vector(message.batch.sample_shape);
  writer.put_string(message.error_type);
  writer.put_string(message.text);
  const std::uint64_t head = out.size() - kHeaderSize;
  std::memcpy(out.data() + 8, &head, sizeof head);
  frame.features = message.batch.features.data();
  frame.features_bytes = message.batch.features.size() * sizeof(float);
}

std::vector<std::uint8_t> encode(const Message& message) {
  EncodedFrame frame;
  encode_frame(message, frame);
  const auto* features = reinterpret_cast<const std::uint8_t*>(frame.features);
  if (frame.features_bytes > 0) frame.head.insert(frame.head.end(), features, features + frame.features_bytes);
  return std::move(frame.head);
}

std::pair<std::uint8_t*, std::size_t> FrameDecoder::writable(std::size_t want) {
  if (pending_) {
    auto* features = reinterpret_cast<std::uint8_t*>(pending_->batch.features.data());
    const std::size_t total = pending_->batch.features.size() * sizeof(float);
    return {features + features_filled_, total - features_filled_};
  }
  if (buffer_.size() - end_ < want) {
    // Compact first, then grow: the buffer holds heads and small messages only.
    const std::size_t used = end_ - begin_;
    if (used > 0) std::memmove(buffer_.data(), buffer_.data() + begin_, used);
    begin_ = 0;
    end_ = used;
    if (buffer_.size() < used + want) buffer_.resize(used + want);
  }
  return {buffer_.data() + end_, buffer_.size() - end_};
}

void FrameDecoder::commit(std::size_t size) {
  if (pending_) {
    features_filled_ += size;
  } else {
    end_ += size;
  }
  parse();
}

void FrameDecoder::parse() {
  while (true) {
    if (pending_) {
      const std::size_t total = pending_->batch.features.size() * sizeof(float);
      // Bytes that came with the head, in the same read, still sit in the buffer.
      const std::size_t take = std::min(end_ - begin_, total - features_filled_);
      if (take > 0) {
        std::memcpy(reinterpret_cast<std::uint8_t*>(pending_->batch.features.data()) + features_filled_,
                    buffer_.data() + begin_, take);
        begin_ += take;
        features_filled_ += take;
      }
      if (features_filled_ < total) return;
      ready_.push_back(std::move(*pending_));
      pending_.reset();
      features_filled_ = 0;
    }
    const std::size_t available = end_ - begin_;
    if (available < kHeaderSize) return;
    const std::uint8_t* frame = buffer_.data() + begin_;
    std::uint32_t magic = 0;
    std::uint32_t type = 0;
    std::uint64_t head = 0;
    std::uint64_t features = 0;
    std::memcpy(&magic, frame, 4);
    std::memcpy(&type, frame + 4, 4);
    std::memcpy(&head, frame + 8, 8);
    std::memcpy(&features, frame + 16, 8);
    if (magic != kMagic) throw std::runtime_error("corrupt worker message: bad frame magic");
    if (head > kMaxHeadBytes || features > kMaxFeatures) {
      throw std::runtime_error("corrupt worker message: a frame declares sizes no batch has");
    }
    if (static_cast<MessageType>(type) == MessageType::spawned) {
      // The pool's own report; a frame that claims it would count a spawn that never happened.
      throw std::runtime_error("corrupt worker message: 'spawned' is never sent on a channel");
    }
    if (available - kHeaderSize < head) return;
    Reader reader(frame + kHeaderSize, head);
    Message message;
    message.type = static_cast<MessageType>(type);
    message.worker_id = reader.get<std::int32_t>();
    message.seq = reader.get<std::int64_t>();
    message.send_idx = reader.get<std::int64_t>();
    message.pid = reader.get<std::int64_t>();
    message.slot = reader.get<std::int32_t>();
    message.slot_samples = reader.get<std::int64_t>();
    message.time_s = reader.get<double>();
    message.duration_s = reader.get<double>();
    message.indices = reader.get_vector<std::int64_t, IndexBuffer::allocator_type>();
    message.batch.indices = reader.get_vector<std::int64_t, IndexBuffer::allocator_type>();
    message.batch.labels = reader.get_vector<std::int64_t, LabelBuffer::allocator_type>();
    message.batch.sample_shape = SampleShape(reader.get_vector<std::int64_t>());
    message.error_type = reader.get_string();
    message.text = reader.get_string();
    begin_ += kHeaderSize + head;
    message.batch.features = FeatureBuffer(features, FeatureBuffer::allocator_type(feature_pool_));
    pending_ = std::move(message);
  }
}

std::optional<Message> FrameDecoder::next() {
  if (ready_begin_ == ready_.size()) {
    ready_.clear();
    ready_begin_ = 0;
    return std::nullopt;
  }
  return std::move(ready_[ready_begin_++]);
}

}  // namespace dlreset::data::detail
