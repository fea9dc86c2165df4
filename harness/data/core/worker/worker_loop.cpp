// Mirrors torch/utils/data/_utils/worker.py @ v1.13.1: the loop every worker runs.
#include "harness/data/core/worker/worker_loop.h"

#include <unistd.h>

#include <exception>
#include <memory>
#include <utility>

#include "harness/data/core/datasets/dataset.h"
#include "harness/data/core/errors.h"
#include "harness/data/core/fetch.h"
#include "harness/data/core/worker/transport/shared_slots.h"
#include "harness/data/core/worker/worker_info.h"
#include "harness/trace/event_log.h"

namespace dlreset::data::detail {

namespace {

/// `pid` is the worker's, asked once: every batch's reply carries it, and getpid is a system call.
Message lifecycle(MessageType type, const WorkerConfig& config, pid_t pid) {
  Message message;
  message.type = type;
  message.worker_id = config.worker_id;
  message.pid = pid;
  message.time_s = trace::monotonic_now_s();
  return message;
}

/// Collates the batch straight into the task's shared-memory slot when it has one that fits,
/// and tells the main process where it lies; otherwise into the reply itself.
void fetch_for(WorkerEndpoint& endpoint, Dataset& dataset, Message& task, Message& reply) {
  const SlotSpan slot = task.slot >= 0 ? endpoint.shared_slot(task.slot) : SlotSpan{};
  if (slot.data != nullptr) {
    // The shape is built once a batch (it is a vector), and only where a slot may take it.
    reply.batch.sample_shape = dataset.sample_shape();
    const SlotLayout layout{static_cast<std::int64_t>(task.indices.size()), shape_numel(reply.batch.sample_shape)};
    if (layout.bytes() <= slot.bytes) {
      fetch_batch_into(dataset, task.indices, reinterpret_cast<std::int64_t*>(slot.data),
                       reinterpret_cast<std::int64_t*>(slot.data + layout.labels_offset()),
                       reinterpret_cast<float*>(slot.data + layout.features_offset()));
      reply.slot_samples = layout.samples;
      return;
    }
  }
  // The task is done with its indices: the batch keeps them.
  reply.batch = fetch_batch(dataset, std::move(task.indices), endpoint.fetch_blocks());
}

}  // namespace

void worker_loop(WorkerEndpoint& endpoint, Dataset& dataset, const WorkerConfig& config) {
  WorkerInfo info;
  info.id = config.worker_id;
  info.num_workers = config.num_workers;
  info.seed = config.seed;
  info.loader = config.loader;
  info.dataset = &dataset;
  info.in_own_process = config.in_own_process;
  info.endpoint = &endpoint;
  const WorkerInfoScope scope(&info);
  const pid_t pid = ::getpid();

  if (!endpoint.send(lifecycle(MessageType::started, config, pid))) return;

  // PyTorch keeps a worker_init_fn failure and reports it on the first task; so does this.
  std::string init_error_type;
  std::string init_error;
  if (config.worker_init_fn) {
    try {
      config.worker_init_fn(config.worker_id);
    } catch (const std::exception& e) {
      init_error_type = exception_type_name(e);
      init_error = std::string("worker_init_fn raised: ") + e.what();
    } catch (...) {
      init_error_type = "unknown exception";
      init_error = "worker_init_fn raised an exception that is not a std::exception";
    }
  }

  while (true) {
    Message message = endpoint.receive();
    if (message.type == MessageType::exit) break;
    if (message.type == MessageType::resume) {
      Message ack = lifecycle(MessageType::resume_ack, config, pid);
      if (!endpoint.send(std::move(ack))) return;
      continue;
    }
    if (message.type != MessageType::task) continue;
    if (endpoint.exit_requested()) continue;  // done_event is set: skip what is still queued

    Message reply = lifecycle(MessageType::batch, config, pid);
    reply.send_idx = message.send_idx;
    reply.slot = message.slot;  // the main process frees it whatever happens here
    const std::int64_t loads_before = dataset.loads();
    if (!init_error.empty()) {
      reply.type = MessageType::error;
      reply.error_type = init_error_type;
      reply.text = init_error;
    } else {
      try {
        fetch_for(endpoint, dataset, message, reply);
      } catch (const std::exception& e) {
        reply.type = MessageType::error;
        reply.error_type = exception_type_name(e);
        reply.text = e.what();
      } catch (...) {
        reply.type = MessageType::error;
        reply.error_type = "unknown exception";
        reply.text = "the dataset raised an exception that is not a std::exception";
      }
    }
    if (dataset.loads() != loads_before) {
      Message loaded = lifecycle(MessageType::dataset_loaded, config, pid);
      loaded.duration_s = dataset.last_load_seconds();
      // Stamped with the load's end, when the worker became ready, not with this report, which
      // goes out one batch's fetch later: the load was the first thing the fetch did, right
      // after the reply's clock read.
      loaded.time_s = reply.time_s + loaded.duration_s;
      if (!endpoint.send(std::move(loaded))) return;
    }
    if (!endpoint.send(std::move(reply))) return;
  }
  endpoint.send(lifecycle(MessageType::exiting, config, pid));
}

}  // namespace dlreset::data::detail
