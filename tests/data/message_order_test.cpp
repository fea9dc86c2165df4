// The one order of a worker's messages over its two ways, the socket and the ring: each message
// is taken in its place whichever way it came, and one whose place was taken is refused.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/data/core/worker/transport/message_order.h"

namespace dlreset::data {
namespace {

detail::Message on_socket(std::int64_t seq) {
  detail::Message message;
  message.seq = seq;
  return message;
}

detail::SlotDescriptor on_ring(std::int64_t seq) {
  detail::SlotDescriptor descriptor;
  descriptor.seq = seq;
  return descriptor;
}

TEST(MessageOrder, SendsTakeOnePlaceEachInTurn) {
  detail::MessageOrder order;
  EXPECT_EQ(order.next_to_send(), 1);
  EXPECT_EQ(order.next_to_send(), 1);  // asking takes no place
  EXPECT_EQ(order.claim_send(), 1);
  EXPECT_EQ(order.claim_send(), 2);
  EXPECT_EQ(order.next_to_send(), 3);
}

TEST(MessageOrder, TakesMessagesInTheirPlaceWhicheverWayTheyCame) {
  // Sent: 1 by the socket, 2 and 3 by the ring, 4 by the socket. The reader sees the socket's
  // 4 before the ring's 2, as when a batch with no free slot overtakes ones in slots.
  std::vector<detail::Message> socket = {on_socket(1), on_socket(4)};
  std::vector<detail::SlotDescriptor> ring = {on_ring(2), on_ring(3)};
  detail::MessageOrder order;
  std::string taken;
  std::size_t socket_next = 0;
  std::size_t ring_next = 0;
  for (int step = 0; step < 10; ++step) {
    const detail::Message* from_socket = socket_next < socket.size() ? &socket[socket_next] : nullptr;
    const detail::SlotDescriptor* from_ring = ring_next < ring.size() ? &ring[ring_next] : nullptr;
    const detail::MessageOrder::Way way = order.due(from_socket, from_ring);
    if (way == detail::MessageOrder::Way::none) break;
    ASSERT_NE(way, detail::MessageOrder::Way::behind);
    if (way == detail::MessageOrder::Way::socket) {
      taken += "s" + std::to_string(socket[socket_next++].seq) + " ";
    } else {
      taken += "r" + std::to_string(ring[ring_next++].seq) + " ";
    }
    order.taken();
  }
  EXPECT_EQ(taken, "s1 r2 r3 s4 ");
  EXPECT_EQ(order.last_received(), 4);
}

TEST(MessageOrder, WaitsForAMessageNotYetArrived) {
  detail::MessageOrder order;
  const detail::Message second = on_socket(2);
  const detail::SlotDescriptor third = on_ring(3);
  EXPECT_EQ(order.due(&second, &third), detail::MessageOrder::Way::none);
  EXPECT_EQ(order.due(nullptr, nullptr), detail::MessageOrder::Way::none);
  EXPECT_FALSE(order.is_due(&third));
}

TEST(MessageOrder, RefusesAMessageWhosePlaceWasTaken) {
  detail::MessageOrder order;
  const detail::Message first = on_socket(1);
  ASSERT_EQ(order.due(&first, nullptr), detail::MessageOrder::Way::socket);
  order.taken();
  const detail::Message again = on_socket(1);
  const detail::SlotDescriptor second = on_ring(2);
  EXPECT_EQ(order.due(&again, &second), detail::MessageOrder::Way::behind);
}

}  // namespace
}  // namespace dlreset::data
