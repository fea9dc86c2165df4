// The one order of a process worker's messages, each way, over its socket and its ring.
#pragma once

#include <cstdint>

#include "harness/data/core/worker/transport/descriptor_ring.h"
#include "harness/data/core/worker/transport/protocol.h"

namespace dlreset::data::detail {

/// A message between a process worker and the main process goes over the socket or, when it
/// has a shared-memory slot, as a descriptor on a ring (descriptor_ring.h). The two ways do not
/// keep each other's order, so each message carries its place in one order per direction
/// (Message::seq, SlotDescriptor::seq), and the reader takes whichever way holds the message
/// due next. Both ends keep one of these: the main process for each worker, and each worker.
class MessageOrder {
 public:
  /// Which way the message due next is on.
  enum class Way {
    none,    ///< Neither: it has not arrived yet.
    socket,  ///< The socket's next message.
    ring,    ///< The ring's front descriptor.
    behind,  ///< The socket's next message has a place already taken: a corrupt message.
  };

  /// The place of the next message sent, before it is known to go.
  std::int64_t next_to_send() const { return last_sent_ + 1; }
  /// Gives the next message sent its place.
  std::int64_t claim_send() { return ++last_sent_; }

  /// Which way holds the message due next: `socket_next` is the socket's next message not yet
  /// taken and `ring_front` the ring's front descriptor, each null when there is none.
  Way due(const Message* socket_next, const SlotDescriptor* ring_front) const {
    if (socket_next != nullptr && socket_next->seq <= last_received_) return Way::behind;
    if (socket_next != nullptr && socket_next->seq == last_received_ + 1) return Way::socket;
    if (is_due(ring_front)) return Way::ring;
    return Way::none;
  }
  /// True when `descriptor` is the message due next.
  bool is_due(const SlotDescriptor* descriptor) const {
    return descriptor != nullptr && descriptor->seq == last_received_ + 1;
  }
  /// Counts the message due as taken.
  void taken() { ++last_received_; }
  /// The place of the last message taken.
  std::int64_t last_received() const { return last_received_; }

 private:
  std::int64_t last_sent_ = 0;
  std::int64_t last_received_ = 0;
};

}  // namespace dlreset::data::detail
