#include "harness/data/worker/protocol.h"

#include <gtest/gtest.h>

#include <cstring>

namespace dlreset::data {
namespace {

Message sample_batch() {
  Message message;
  message.type = MessageType::batch;
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
  Message error;
  error.type = MessageType::error;
  error.send_idx = 3;
  error.error_type = "std::runtime_error";
  error.text = "sample 3 is broken";
  std::vector<std::uint8_t> stream = encode(sample_batch());
  const std::vector<std::uint8_t> second = encode(error);
  stream.insert(stream.end(), second.begin(), second.end());

  for (std::size_t piece : {1u, 7u, 64u, 100000u}) {
    FrameDecoder decoder;
    std::vector<Message> decoded;
    for (std::size_t at = 0; at < stream.size(); at += piece) {
      const std::size_t n = std::min(piece, stream.size() - at);
      std::memcpy(decoder.prepare(n), stream.data() + at, n);
      decoder.commit(n);
      while (auto message = decoder.next()) decoded.push_back(std::move(*message));
    }
    ASSERT_EQ(decoded.size(), 2u) << "piece " << piece;
    EXPECT_EQ(decoded[0].type, MessageType::batch);
    EXPECT_EQ(decoded[0].send_idx, 17);
    EXPECT_EQ(decoded[0].batch.indices, sample_batch().batch.indices);
    EXPECT_EQ(decoded[0].batch.features, sample_batch().batch.features);
    EXPECT_EQ(decoded[0].batch.sample_shape, sample_batch().batch.sample_shape);
    EXPECT_EQ(decoded[1].type, MessageType::error);
    EXPECT_EQ(decoded[1].text, "sample 3 is broken");
    EXPECT_TRUE(decoder.empty());
  }
}

TEST(FrameDecoder, RejectsAStreamThatIsNotFrames) {
  FrameDecoder decoder;
  const char garbage[] = "this is not a frame at all";
  std::memcpy(decoder.prepare(sizeof garbage), garbage, sizeof garbage);
  decoder.commit(sizeof garbage);
  EXPECT_THROW(decoder.next(), std::runtime_error);
}

}  // namespace
}  // namespace dlreset::data
