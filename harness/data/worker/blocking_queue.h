// A small multi-producer queue for the thread back-end.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace dlreset::data::detail {

/// The thread back-end's stand-in for a multiprocessing.Queue (like LibTorch's
/// torch/data/detail/queue.h, plus a timed pop for the DataLoader's timeout).
template <typename T>
class BlockingQueue {
 public:
  void push(T value) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      items_.push_back(std::move(value));
    }
    ready_.notify_one();
  }

  T pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [this] { return !items_.empty(); });
    return take(lock);
  }

  /// The front item, or nullopt once `timeout` has passed or wake() was called. A wake is
  /// consumed by the pop_for it ends (and by one that finds it pending); `woken` says which.
  template <typename Rep, typename Period>
  std::optional<T> pop_for(std::chrono::duration<Rep, Period> timeout, bool* woken = nullptr) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait_for(lock, timeout, [this] { return !items_.empty() || woken_; });
    if (woken) *woken = woken_;
    woken_ = false;
    if (items_.empty()) return std::nullopt;
    return take(lock);
  }

  /// Ends a pop_for() waiting on another thread (or the next one) without an item.
  void wake() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      woken_ = true;
    }
    ready_.notify_all();
  }

 private:
  T take(std::unique_lock<std::mutex>&) {
    T value = std::move(items_.front());
    items_.pop_front();
    return value;
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<T> items_;
  bool woken_ = false;
};

}  // namespace dlreset::data::detail
