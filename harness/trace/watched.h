// The watched field: the C++ form of the reporter's `_iterator` property whose setter printed a
// stack trace whenever it was set to None (Lightning issue #10389).
#pragma once

#include <cstddef>
#include <utility>

namespace dlreset::trace {

/// Holds a pointer-like value (raw pointer, `std::unique_ptr`, `std::shared_ptr`) and calls a
/// hook whenever null is stored over a live value. Storing anything else, or storing null over
/// null, never calls the hook.
///
/// The hook runs *before* the old value is released, so it sees the stack of whoever nulled
/// the field while the old object still exists; the old value's destructor runs after.
///
/// A disarmed field (no hook) costs one predictable branch more than a plain pointer store:
/// that is what lets the DataLoader keep it on all the time (bench: BM_WatchedStore).
template <typename Ptr>
class Watched {
 public:
  /// A plain function and a context pointer rather than std::function: arming must not
  /// allocate and an armed store must not pay for type erasure.
  using Hook = void (*)(void* context);

  Watched() = default;
  explicit Watched(Ptr value) : value_(std::move(value)) {}
  ~Watched() = default;
  Watched(const Watched&) = delete;
  Watched& operator=(const Watched&) = delete;

  void arm(Hook hook, void* context) noexcept {
    hook_ = hook;
    context_ = context;
  }
  void disarm() noexcept { hook_ = nullptr; }
  bool armed() const noexcept { return hook_ != nullptr; }

  Watched& operator=(Ptr value) {
    // The new value is tested first: it is already in a register, while the hook is a load,
    // so a non-null store never touches hook_ and a disarmed null store costs one load.
    if (value == nullptr && __builtin_expect(hook_ != nullptr, 0) && value_ != nullptr) {
      hook_(context_);
    }
    value_ = std::move(value);
    return *this;
  }
  Watched& operator=(std::nullptr_t) {
    *this = Ptr(nullptr);
    return *this;
  }

  const Ptr& get() const noexcept { return value_; }
  auto operator->() const noexcept { return &*value_; }
  explicit operator bool() const noexcept { return value_ != nullptr; }
  bool operator==(std::nullptr_t) const noexcept { return value_ == nullptr; }
  bool operator!=(std::nullptr_t) const noexcept { return value_ != nullptr; }

 private:
  Ptr value_{};
  Hook hook_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace dlreset::trace
