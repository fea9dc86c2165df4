#include "harness/data/worker/protocol.h"

#include <cstring>
#include <stdexcept>

namespace dlreset::data {

namespace {

constexpr std::uint32_t kMagic = 0x574c5244;  // "DRLW"
constexpr std::size_t kHeaderSize = 4 + 4 + 8;

class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}
  template <typename T>
  void put(const T& value) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&value);
    out_.insert(out_.end(), bytes, bytes + sizeof(T));
  }
  template <typename T>
  void put_vector(const std::vector<T>& values) {
    put<std::uint64_t>(values.size());
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(values.data());
    out_.insert(out_.end(), bytes, bytes + values.size() * sizeof(T));
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
  template <typename T>
  std::vector<T> get_vector() {
    const auto count = get<std::uint64_t>();
    if (count > (size_ - offset_) / sizeof(T)) throw std::runtime_error("corrupt worker message");
    std::vector<T> values(count);
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
  }
  return "unknown";
}

std::vector<std::uint8_t> encode(const Message& message) {
  std::vector<std::uint8_t> out;
  out.reserve(kHeaderSize + 128 + message.indices.size() * 8 + message.batch.indices.size() * 16 +
              message.batch.features.size() * sizeof(float) + message.text.size());
  Writer writer(out);
  writer.put<std::uint32_t>(kMagic);
  writer.put<std::uint32_t>(static_cast<std::uint32_t>(message.type));
  writer.put<std::uint64_t>(0);  // payload size, patched below
  writer.put<std::int32_t>(message.worker_id);
  writer.put<std::int64_t>(message.send_idx);
  writer.put<std::int64_t>(message.pid);
  writer.put<double>(message.time_s);
  writer.put<double>(message.duration_s);
  writer.put_vector(message.indices);
  writer.put_vector(message.batch.indices);
  writer.put_vector(message.batch.labels);
  writer.put_vector(message.batch.features);
  writer.put_vector(message.batch.sample_shape);
  writer.put_string(message.error_type);
  writer.put_string(message.text);
  const std::uint64_t payload = out.size() - kHeaderSize;
  std::memcpy(out.data() + 8, &payload, sizeof payload);
  return out;
}

std::uint8_t* FrameDecoder::prepare(std::size_t size) {
  if (free_ < size) {
    // Compact first, then grow: the buffer holds at most a frame or two.
    const std::size_t used = buffer_.size() - free_ - begin_;
    // The first call finds the buffer unallocated (data() null): nothing to move then.
    if (used > 0) std::memmove(buffer_.data(), buffer_.data() + begin_, used);
    begin_ = 0;
    buffer_.resize(std::max(buffer_.size(), used + size));
    free_ = buffer_.size() - used;
  }
  return buffer_.data() + (buffer_.size() - free_);
}

void FrameDecoder::commit(std::size_t size) { free_ -= size; }

std::optional<Message> FrameDecoder::next() {
  const std::size_t available = buffer_.size() - free_ - begin_;
  if (available < kHeaderSize) return std::nullopt;
  const std::uint8_t* frame = buffer_.data() + begin_;
  std::uint32_t magic = 0;
  std::uint32_t type = 0;
  std::uint64_t payload = 0;
  std::memcpy(&magic, frame, 4);
  std::memcpy(&type, frame + 4, 4);
  std::memcpy(&payload, frame + 8, 8);
  if (magic != kMagic) throw std::runtime_error("corrupt worker message: bad frame magic");
  if (available - kHeaderSize < payload) return std::nullopt;
  Reader reader(frame + kHeaderSize, payload);
  Message message;
  message.type = static_cast<MessageType>(type);
  message.worker_id = reader.get<std::int32_t>();
  message.send_idx = reader.get<std::int64_t>();
  message.pid = reader.get<std::int64_t>();
  message.time_s = reader.get<double>();
  message.duration_s = reader.get<double>();
  message.indices = reader.get_vector<std::int64_t>();
  message.batch.indices = reader.get_vector<std::int64_t>();
  message.batch.labels = reader.get_vector<std::int64_t>();
  message.batch.features = reader.get_vector<float>();
  message.batch.sample_shape = reader.get_vector<std::int64_t>();
  message.error_type = reader.get_string();
  message.text = reader.get_string();
  begin_ += kHeaderSize + payload;
  return message;
}

}  // namespace dlreset::data
