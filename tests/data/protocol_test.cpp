#include "harness/data/core/worker/transport/protocol.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace dlreset::data {
namespace {

detail::Message sample_batch() {
  detail::Message message;
  message.type = detail::MessageType::batch;
  message.worker_id = 2;
  message.send_idx = 17;
  message.pid = 1234;
  message.time_s = 5.5;
  message.batch.indices = {3, 1, 4};
  message.batch.labels = {1, 5, 9};
  message.batch.features = {0.5f, -1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
  message.batch.sample_shape = {1, 2};
  return message;
}

TEST(FrameDecoder, ReassemblesFramesSplitAnywhere) {
  detail::Message error;
  error.type = detail::MessageType::error;
  error.send_idx = 3;
  error.error_type = "std::runtime_error";
  error.text = "sample 3 is broken";
  std::vector<std::uint8_t> stream = detail::encode(sample_batch());
  const std::vector<std::uint8_t> second = detail::encode(error);
  stream.insert(stream.end(), second.begin(), second.end());

  for (std::size_t piece : {1u, 7u, 64u, 100000u}) {
    detail::FrameDecoder decoder;
    std::vector<detail::Message> decoded;
    for (std::size_t at = 0; at < stream.size(); at += piece) {
      const std::size_t n = std::min(piece, stream.size() - at);
      std::size_t written = 0;
      while (written < n) {  // the decoder may take fewer bytes than offered
        const auto [into, room] = decoder.writable(n - written);
        const std::size_t take = std::min(room, n - written);
        std::memcpy(into, stream.data() + at + written, take);
        decoder.commit(take);
        written += take;
      }
      while (auto message = decoder.next()) decoded.push_back(std::move(*message));
    }
    ASSERT_EQ(decoded.size(), 2u) << "piece " << piece;
    EXPECT_EQ(decoded[0].type, detail::MessageType::batch);
    EXPECT_EQ(decoded[0].send_idx, 17);
    EXPECT_EQ(decoded[0].batch.indices, sample_batch().batch.indices);
    EXPECT_EQ(decoded[0].batch.features, sample_batch().batch.features);
    EXPECT_EQ(decoded[0].batch.sample_shape, sample_batch().batch.sample_shape);
    EXPECT_EQ(decoded[1].type, detail::MessageType::error);
    EXPECT_EQ(decoded[1].text, "sample 3 is broken");
    EXPECT_TRUE(decoder.empty());
  }
}

TEST(FrameDecoder, ReadsLargeFeaturesStraightIntoTheMessage) {
  detail::Message big = sample_batch();
  big.batch.features.resize(64 * 784);
  for (std::size_t i = 0; i < big.batch.features.size(); ++i) big.batch.features[i] = static_cast<float>(i) * 0.5f;
  const std::vector<std::uint8_t> stream = detail::encode(big);
  detail::FrameDecoder decoder;
  std::size_t at = 0;
  std::size_t direct_reads = 0;
  while (at < stream.size()) {
    const auto [into, room] = decoder.writable(4096);
    const std::size_t take = std::min({room, stream.size() - at, std::size_t{4096}});
    // Once the head is in, the rest of the frame goes to the message's own buffer.
    if (room == stream.size() - at) ++direct_reads;
    std::memcpy(into, stream.data() + at, take);
    decoder.commit(take);
    at += take;
  }
  std::optional<detail::Message> decoded = decoder.next();
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->batch.features, big.batch.features);
  EXPECT_EQ(decoded->batch.labels, big.batch.labels);
  EXPECT_GT(direct_reads, 0u);
  EXPECT_TRUE(decoder.empty());
}

/// Feeds one whole frame to the decoder, as one read.
void feed(detail::FrameDecoder& decoder, const std::vector<std::uint8_t>& stream) {
  std::size_t at = 0;
  while (at < stream.size()) {
    const auto [into, room] = decoder.writable(stream.size() - at);
    const std::size_t take = std::min(room, stream.size() - at);
    std::memcpy(into, stream.data() + at, take);
    decoder.commit(take);
    at += take;
  }
}

TEST(FrameDecoder, ReusesTheFeatureBlocksOfBatchesThatWereFreed) {
  detail::Message big = sample_batch();
  big.batch.features.assign(64 * 784, 1.5f);
  const std::vector<std::uint8_t> stream = detail::encode(big);
  detail::FrameDecoder decoder;
  for (int i = 0; i < 10; ++i) {  // each batch is used and dropped before the next arrives
    feed(decoder, stream);
    std::optional<detail::Message> decoded = decoder.next();
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->batch.features, big.batch.features);
  }
  EXPECT_EQ(decoder.feature_pool().fresh_allocations(), 1);
  EXPECT_EQ(decoder.feature_pool().reuses(), 9);

  std::vector<detail::Message> held;  // batches still in use need blocks of their own
  for (int i = 0; i < 3; ++i) {
    feed(decoder, stream);
    held.push_back(std::move(*decoder.next()));
  }
  EXPECT_EQ(decoder.feature_pool().fresh_allocations(), 1 + 2);
  EXPECT_EQ(decoder.feature_pool().reuses(), 9 + 1);
}

TEST(FrameDecoder, RejectsAFrameThatDeclaresImpossibleSizes) {
  std::vector<std::uint8_t> stream = detail::encode(sample_batch());
  const std::uint64_t huge = std::uint64_t{1} << 40;
  std::memcpy(stream.data() + 16, &huge, sizeof huge);  // the feature count
  detail::FrameDecoder decoder;
  const auto [into, room] = decoder.writable(stream.size());
  ASSERT_GE(room, stream.size());
  std::memcpy(into, stream.data(), stream.size());
  EXPECT_THROW(decoder.commit(stream.size()), std::runtime_error);
}

TEST(FrameDecoder, RejectsAStreamThatIsNotFrames) {
  detail::FrameDecoder decoder;
  const char garbage[] = "this is not a frame at all";
  const auto [into, room] = decoder.writable(sizeof garbage);
  ASSERT_GE(room, sizeof garbage);
  std::memcpy(into, garbage, sizeof garbage);
  EXPECT_THROW(decoder.commit(sizeof garbage), std::runtime_error);
}

}  // namespace
}  // namespace dlreset::data
