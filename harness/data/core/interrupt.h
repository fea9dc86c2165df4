// Lets a signal end the DataLoader's waits, as Python's KeyboardInterrupt ends a blocked
// `next(loader_iter)`: PyTorch waits for data in slices (MP_STATUS_CHECK_INTERVAL) precisely so
// that an interrupt raised in the main thread is not stuck behind a worker that never answers.
#pragma once

#include <chrono>

namespace dlreset::data {

/// How often a wait for workers looks at the interrupt request. A signal may be delivered to
/// any thread of the process (LibTorch's pool threads, thread-backend workers), so a wait in
/// the main thread cannot count on poll() returning EINTR: it checks the request at least this
/// often instead. 100 ms keeps Ctrl-C prompt and costs ten wake-ups a second of waiting.
inline constexpr std::chrono::milliseconds kInterruptCheckInterval{100};

/// Asks every DataLoader in this process to stop: the next batch request, and any wait for
/// workers in progress, throws InterruptedError. Async-signal-safe (one lock-free store), so a
/// signal handler may call it; the first request wins.
void request_interrupt(int signal_number) noexcept;

/// The signal number given to request_interrupt, or 0 when none is pending.
int interrupt_requested() noexcept;

/// Throws InterruptedError when an interrupt is pending.
void throw_if_interrupted();

/// Forgets a pending request (tests, and a program that handled the interrupt and goes on).
void clear_interrupt() noexcept;

}  // namespace dlreset::data
