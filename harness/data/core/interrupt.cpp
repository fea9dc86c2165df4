#include "harness/data/core/interrupt.h"

#include <atomic>

#include "harness/data/core/errors.h"

namespace dlreset::data {

namespace {
/// One of the five pieces of process-wide mutable state (docs/design.md §4): a signal handler
/// sets it, and may only touch lock-free atomics (or volatile sig_atomic_t).
std::atomic<int> pending_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "request_interrupt must be async-signal-safe");
}  // namespace

void request_interrupt(int signal_number) noexcept {
  int none = 0;
  pending_signal.compare_exchange_strong(none, signal_number);
}

int interrupt_requested() noexcept { return pending_signal.load(std::memory_order_relaxed); }

void throw_if_interrupted() {
  if (const int signal_number = interrupt_requested()) throw InterruptedError(signal_number);
}

void clear_interrupt() noexcept { pending_signal.store(0); }

}  // namespace dlreset::data
