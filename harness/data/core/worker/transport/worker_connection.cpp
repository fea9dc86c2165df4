#include "harness/data/core/worker/transport/worker_connection.h"

#include <cstddef>
#include <cstring>
#include <utility>

#include "harness/data/core/errors.h"
#include "harness/data/core/worker/transport/slot_batch.h"

namespace dlreset::data::detail {

WorkerConnection::WorkerConnection(std::string loader, int id, pid_t pid, SocketChannel channel,
                                   std::shared_ptr<SharedSlots> slots)
    : loader_(std::move(loader)), id_(id), pid_(pid), channel_(std::move(channel)), slots_(std::move(slots)) {
  if (slots_) {
    tasks_ = slots_->tasks();
    answers_ = slots_->answers();
  }
}

bool WorkerConnection::send(const Message& message, const SocketChannel::WaitForRoom& wait_for_room) {
  if (message.type == MessageType::exit && tasks_.valid()) tasks_.close();
  const bool task_with_slots = message.type == MessageType::task && slots_;
  const int slot = task_with_slots ? slots_->acquire() : -1;
  if (slot >= 0 && push_task(message, slot)) return true;
  if (task_with_slots && slot < 0) ++batches_without_a_slot_;  // the consumer holds them all: inline
  outgoing_ = message;
  outgoing_.seq = order_.claim_send();
  if (task_with_slots) outgoing_.slot = slot;
  bool sent = false;
  try {
    sent = channel_.send(outgoing_, wait_for_room);
  } catch (...) {
    if (slot >= 0) slots_->release(slot);  // the task never arrived
    throw;
  }
  if (!sent && slot >= 0) slots_->release(slot);
  return sent;
}

bool WorkerConnection::push_task(const Message& message, int slot) {
  const std::size_t samples = message.indices.size();
  if (samples > slots_->slot_bytes() / sizeof(std::int64_t)) return false;
  // The indices go into the slot, where the worker collates the batch over them.
  if (samples > 0) std::memcpy(slots_->slot(slot), message.indices.data(), samples * sizeof(std::int64_t));
  SlotDescriptor descriptor;
  descriptor.seq = order_.next_to_send();
  descriptor.send_idx = message.send_idx;
  descriptor.samples = static_cast<std::int64_t>(samples);
  descriptor.slot = slot;
  // Never full while every descriptor holds its own slot; if it were, the socket takes it.
  if (!tasks_.push(descriptor)) return false;
  order_.claim_send();
  return true;
}

std::optional<Message> WorkerConnection::pop_in_order() {
  if (!held_) held_ = channel_.pop();
  const SlotDescriptor* answer = answers_.valid() ? answers_.front() : nullptr;
  switch (order_.due(held_ ? &*held_ : nullptr, answer)) {
    case MessageOrder::Way::none: return std::nullopt;
    case MessageOrder::Way::behind:
      throw DataLoaderError("DataLoader worker " + std::to_string(id_) + " (pid " + std::to_string(pid_) +
                            ") of loader '" + loader_ + "' sent message " + std::to_string(held_->seq) +
                            " after message " + std::to_string(order_.last_received()) + ": a corrupt message.");
    case MessageOrder::Way::socket: {
      Message message = std::move(*held_);
      held_.reset();
      order_.taken();
      return message;
    }
    case MessageOrder::Way::ring: {
      // Copied before use: the memory is the worker's too.
      const SlotDescriptor descriptor = *answer;
      answers_.pop();
      order_.taken();
      return batch_message(descriptor, id_, pid_);
    }
  }
  return std::nullopt;
}

std::optional<Message> WorkerConnection::pop_data(const std::shared_ptr<BlockPool>& index_blocks,
                                                  const std::function<void(const Message&)>& on_report) {
  while (std::optional<Message> message = pop_in_order()) {
    if (!is_lifecycle(message->type)) {
      if (take_from_slot(slots_.get(), *message, index_blocks, id_, pid_, loader_)) ++batches_in_slots_;
      return message;
    }
    if (on_report) on_report(*message);
  }
  return std::nullopt;
}

void WorkerConnection::close(bool frame_half_sent) {
  channel_.close();
  cut_off_ = cut_off_ || frame_half_sent;
}

void WorkerConnection::add_counts(TransportStats& stats) const {
  stats.batches_in_slots += batches_in_slots_;
  stats.batches_without_a_slot += batches_without_a_slot_;
  stats.feature_blocks_allocated += channel_.feature_pool().fresh_allocations();
  if (slots_) stats.slots_in_use += slots_->in_use();
  if (tasks_.valid()) {
    stats.ring_descriptors += static_cast<std::int64_t>(tasks_.pushed() + answers_.pushed());
    stats.doorbells += static_cast<std::int64_t>(tasks_.bells_rung() + answers_.bells_rung());
  }
}

bool WorkerConnection::prepare_to_wait() {
  if (!answers_.valid()) return false;
  answers_.prepare_to_wait();
  // Looked at again after saying so: a batch pushed before that rang no bell.
  return order_.is_due(answers_.front());
}

void WorkerConnection::finish_wait(bool prepared) {
  if (prepared && answers_.valid()) answers_.finish_wait(/*rang=*/false);  // edge-triggered: nothing to take
}

}  // namespace dlreset::data::detail
