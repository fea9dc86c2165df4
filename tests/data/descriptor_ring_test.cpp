// The ring of descriptors between a main process and a worker: order, capacity, and a bell that
// rings only for a reader that said it sleeps. Counted, never timed.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "harness/data/core/worker/transport/descriptor_ring.h"

namespace dlreset::data {
namespace {

constexpr std::uint32_t kCapacity = 4;

/// A ring in memory a forked child shares, with its bell.
class SharedRing {
 public:
  SharedRing()
      : bytes_(detail::DescriptorRing::bytes(kCapacity)),
        memory_(::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)),
        bell_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~SharedRing() {
    ::munmap(memory_, bytes_);
    ::close(bell_);
  }
  SharedRing(const SharedRing&) = delete;
  SharedRing& operator=(const SharedRing&) = delete;

  detail::DescriptorRing view() const { return detail::DescriptorRing(memory_, kCapacity, bell_); }
  /// The bell's count, taken: how many times it rang since last asked, as one eventfd counts.
  std::uint64_t take_rings() const {
    std::uint64_t count = 0;
    return ::read(bell_, &count, sizeof count) == sizeof count ? count : 0;
  }

 private:
  std::size_t bytes_;
  void* memory_;
  int bell_;
};

detail::SlotDescriptor task(std::int64_t seq) {
  detail::SlotDescriptor descriptor;
  descriptor.seq = seq;
  descriptor.send_idx = 100 + seq;
  descriptor.slot = static_cast<std::int32_t>(seq % kCapacity);
  return descriptor;
}

TEST(DescriptorRing, HandsDescriptorsOutInTheOrderTheyWerePushed) {
  const SharedRing shared;
  detail::DescriptorRing producer = shared.view();
  detail::DescriptorRing consumer = shared.view();
  std::int64_t seen = 0;
  for (std::int64_t seq = 1; seq <= 3 * kCapacity; ++seq) {
    ASSERT_TRUE(producer.push(task(seq)));
    if (seq % 2 == 0) {  // two at a time, across the ring's wrap
      for (int k = 0; k < 2; ++k) {
        const detail::SlotDescriptor* front = consumer.front();
        ASSERT_NE(front, nullptr);
        EXPECT_EQ(front->seq, seen + 1);
        EXPECT_EQ(front->send_idx, 100 + seen + 1);
        consumer.pop();
        ++seen;
      }
    }
  }
  EXPECT_EQ(seen, 3 * kCapacity);
  EXPECT_EQ(consumer.front(), nullptr);
  EXPECT_EQ(producer.pushed(), 3u * kCapacity);
}

TEST(DescriptorRing, RefusesAPushBeyondItsCapacity) {
  const SharedRing shared;
  detail::DescriptorRing ring = shared.view();
  for (std::uint32_t i = 0; i < kCapacity; ++i) EXPECT_TRUE(ring.push(task(i + 1)));
  EXPECT_FALSE(ring.push(task(kCapacity + 1)));
  EXPECT_EQ(ring.pushed(), kCapacity);
  ring.pop();
  EXPECT_TRUE(ring.push(task(kCapacity + 1)));
}

TEST(DescriptorRing, RingsItsBellOnlyForAReaderThatSaidItSleeps) {
  const SharedRing shared;
  detail::DescriptorRing producer = shared.view();
  detail::DescriptorRing consumer = shared.view();
  ASSERT_TRUE(producer.push(task(1)));
  EXPECT_EQ(producer.bells_rung(), 0u);
  EXPECT_EQ(shared.take_rings(), 0u);

  consumer.prepare_to_wait();
  ASSERT_TRUE(producer.push(task(2)));
  ASSERT_TRUE(producer.push(task(3)));  // the first push cleared the reader's word: one bell
  EXPECT_EQ(producer.bells_rung(), 1u);
  EXPECT_EQ(shared.take_rings(), 1u);
  consumer.finish_wait(false);

  consumer.prepare_to_wait();
  consumer.finish_wait(false);  // woke for another reason: the next push finds it awake
  consumer.pop();
  ASSERT_TRUE(producer.push(task(4)));
  EXPECT_EQ(producer.bells_rung(), 1u);
  EXPECT_EQ(shared.take_rings(), 0u);
}

TEST(DescriptorRing, ClosingWakesASleepingReaderAndSaysSo) {
  const SharedRing shared;
  detail::DescriptorRing producer = shared.view();
  detail::DescriptorRing consumer = shared.view();
  EXPECT_FALSE(consumer.closed());
  consumer.prepare_to_wait();
  producer.close();
  EXPECT_TRUE(consumer.closed());
  EXPECT_EQ(shared.take_rings(), 1u);
}

/// A forked producer and a reader that sleeps on the bell whenever the ring is empty: every
/// descriptor arrives, in order, and none is left behind a sleeping reader (the test would hang).
TEST(DescriptorRing, AReaderInAnotherProcessSleepsOnTheBellAndMissesNothing) {
  constexpr std::int64_t kDescriptors = 20000;
  const SharedRing shared;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    detail::DescriptorRing producer = shared.view();
    for (std::int64_t seq = 1; seq <= kDescriptors; ++seq) {
      while (!producer.push(task(seq))) {
        ::sched_yield();  // full: the reader is behind
      }
    }
    ::_exit(0);
  }
  detail::DescriptorRing consumer = shared.view();
  std::int64_t next = 1;
  std::uint64_t rings = 0;
  while (next <= kDescriptors) {
    if (const detail::SlotDescriptor* front = consumer.front()) {
      ASSERT_EQ(front->seq, next);
      consumer.pop();
      ++next;
      continue;
    }
    consumer.prepare_to_wait();
    if (consumer.front() != nullptr) {
      consumer.finish_wait(false);
      continue;
    }
    pollfd bell{shared.view().bell_fd(), POLLIN, 0};
    // No timeout: a descriptor pushed without a bell while this sleeps would hang here.
    ASSERT_EQ(::poll(&bell, 1, -1), 1);
    rings += shared.take_rings();  // what finish_wait(true) would take, counted here
    consumer.finish_wait(false);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(next - 1, kDescriptors);
  // Each bell the producer counted reached the reader (a wait that found a descriptor after
  // saying it sleeps may leave one for the next).
  rings += shared.take_rings();
  EXPECT_EQ(consumer.bells_rung(), rings);
  EXPECT_GT(rings, 0u);
}

}  // namespace
}  // namespace dlreset::data
