// A small multi-producer queue for the thread back-end.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace dlreset::data::detail {

/// The thread back-end's stand-in for a multiprocessing.Queue (like LibTorch's
/// torch/data/detail/queue.h, plus a timed pop for the DataLoader's timeout). Its items lie in
/// one buffer that keeps its capacity (a deque would take a new block every second push of a
/// message): the steady state of a loader allocates nothing here.
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
    ready_.wait(lock, [this] { return !empty(); });
    return take(lock);
  }

  /// The front item, or nullopt once `timeout` has passed or wake() was called. A wake is
  /// consumed by the pop_for it ends (and by one that finds it pending); `woken` says which.
  template <typename Rep, typename Period>
  std::optional<T> pop_for(std::chrono::duration<Rep, Period> timeout, bool* woken = nullptr) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait_for(lock, timeout, [this] { return !empty() || woken_; });
    if (woken) *woken = woken_;
    woken_ = false;
    if (empty()) return std::nullopt;
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
  bool empty() const { return front_ == items_.size(); }

  T take(std::unique_lock<std::mutex>&) {
    T value = std::move(items_[front_]);
    ++front_;
    if (empty()) {
      items_.clear();
      front_ = 0;
    } else if (front_ >= kCompactAfter && 2 * front_ >= items_.size()) {
      // A queue that never quite empties: move the waiting items to the front, so the buffer
      // stays about twice the longest queue instead of growing with every push.
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(front_));
      front_ = 0;
    }
    return value;
  }

  static constexpr std::size_t kCompactAfter = 16;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<T> items_;
  std::size_t front_ = 0;  ///< The oldest item; those before it were taken.
  bool woken_ = false;
};

}  // namespace dlreset::data::detail
