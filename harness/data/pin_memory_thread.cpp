// Mirrors _pin_memory_loop of torch/utils/data/_utils/pin_memory.py @ v1.13.1.
#include "harness/data/pin_memory_thread.h"

#include <algorithm>
#include <utility>

#include "harness/data/core/errors.h"
#include "harness/data/core/interrupt.h"
#include "harness/data/core/worker/status_check.h"
#include "harness/data/core/worker/worker_death_watch.h"
#include "harness/data/core/worker/worker_pool.h"
#include "harness/trace/event_log.h"

namespace dlreset::data::detail {

PinMemoryThread::PinMemoryThread(detail::WorkerPool& pool, PinMemoryFunction pin, std::string loader)
    : pool_(pool), pin_(std::move(pin)), loader_(std::move(loader)) {
  thread_ = std::thread([this] { pin_memory_loop(); });
}

PinMemoryThread::~PinMemoryThread() { stop(); }

bool PinMemoryThread::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

void PinMemoryThread::send(int worker_id, detail::Message message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    outbox_.emplace_back(worker_id, std::move(message));
  }
  pool_.wake();
}

void PinMemoryThread::pin_memory_loop() {
  // PyTorch also calls torch.set_num_threads(1) and torch.cuda.set_device(device_id) here;
  // dlreset pins with one memcpy a tensor and uses device 0 alone.
  while (!done()) {
    try {
      do_one_step();
    } catch (const InterruptedError&) {
      // Ctrl-C is the main thread's to raise (it checks while it waits for this thread, as
      // Python raises KeyboardInterrupt in the main thread alone); wait for it to stop us.
      std::unique_lock<std::mutex> lock(mutex_);
      done_signal_.wait_for(lock, kInterruptCheckInterval, [this] { return done_; });
    } catch (...) {
      // The pool cannot go on (a worker died, a message was corrupt): hand that over behind
      // the results that came before it, and touch the pool no more.
      WorkerResult failure;
      failure.failure = std::current_exception();
      data_queue_.push(std::move(failure));
      std::unique_lock<std::mutex> lock(mutex_);
      done_signal_.wait(lock, [this] { return done_; });
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stopped_at_s_ = trace::monotonic_now_s();
}

void PinMemoryThread::do_one_step() {
  // One at a time: an interrupted send loses its own message alone.
  while (true) {
    std::pair<int, detail::Message> outgoing;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (done_) return;
      if (outbox_.empty()) break;
      outgoing = std::move(outbox_.front());
      outbox_.pop_front();
    }
    pool_.send(outgoing.first, outgoing.second);
  }
  std::optional<detail::Message> message = pool_.receive(detail::kStatusCheckInterval);
  if (!message) return;  // a wake-up (something to send), or nothing for a while
  WorkerResult result;
  result.message = std::move(*message);
  if (done()) return;  // dropped, as PyTorch's loop drops what it holds once done
  if (result.message.type == detail::MessageType::batch) {
    try {
      // Moved out, so that a shared-memory slot the batch came in is free once it is copied,
      // not when the main thread takes the pinned copy.
      RawBatch raw = std::move(result.message.batch);
      result.batch = pin_(std::move(raw));
      std::lock_guard<std::mutex> lock(mutex_);
      ++batches_pinned_;
    } catch (const std::exception& e) {
      result.pin_error = "Caught " + exception_type_name(e) + " in pin memory thread for device 0 of loader '" +
                         loader_ + "'. Original message: " + e.what();
    }
  }
  data_queue_.push(std::move(result));
}

std::optional<WorkerResult> PinMemoryThread::get(std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  if (failure_) std::rethrow_exception(failure_);
  const auto deadline = Clock::now() + timeout;
  while (true) {
    throw_if_interrupted();
    // Another loader's dead worker is raised here, in the main thread: this thread must not
    // end for it. A death of our own comes from the thread, in its turn.
    detail::throw_if_a_worker_died(&pool_);
    const auto left = std::max(deadline - Clock::now(), Clock::duration::zero());
    const auto slice = std::min<Clock::duration>(left, kInterruptCheckInterval);
    if (std::optional<WorkerResult> result = data_queue_.pop_for(slice)) {
      if (result->failure) {
        failure_ = result->failure;
        std::rethrow_exception(failure_);
      }
      return result;
    }
    if (slice == left) return std::nullopt;
  }
}

void PinMemoryThread::stop() {
  if (!thread_.joinable()) return;  // stopped already
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  done_signal_.notify_all();
  pool_.cancel_sends();
  pool_.wake();
  if (thread_.joinable()) thread_.join();
}

std::int64_t PinMemoryThread::batches_pinned() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return batches_pinned_;
}

double PinMemoryThread::stopped_at_s() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopped_at_s_;
}

}  // namespace dlreset::data::detail
