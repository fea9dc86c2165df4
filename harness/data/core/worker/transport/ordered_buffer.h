// Results that arrived before their turn, kept at their place in one order until it comes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dlreset::data::detail {

/// Holds values by their place in one order (a task's send_idx) while fewer than `capacity`
/// places are open at once, each at its place modulo `capacity`: as many entries as tasks in
/// flight, made once, so keeping and taking a value allocates nothing of its own. A place that
/// finds its entry taken by another place means that more were in flight than the capacity
/// allows, a bug of the caller, and throws std::logic_error naming both places.
template <typename T>
class OrderedBuffer {
 public:
  /// `capacity`: the most places open at once (prefetch_factor × num_workers); at least 1.
  explicit OrderedBuffer(std::size_t capacity) : entries_(capacity == 0 ? 1 : capacity) {}

  /// Keeps `value` until take(place) asks for it.
  void put(std::int64_t place, T value) {
    Entry& entry = at(place);
    if (entry.value && entry.place != place) {
      throw std::logic_error("An ordered buffer of " + std::to_string(entries_.size()) + " entries was given place " +
                             std::to_string(place) + " while it still held place " + std::to_string(entry.place) +
                             ": more results were in flight than it was made for.");
    }
    entry.place = place;
    entry.value = std::move(value);
  }
  /// The value kept at `place`, taken out; nullopt when none came for it yet.
  std::optional<T> take(std::int64_t place) {
    Entry& entry = at(place);
    if (!entry.value || entry.place != place) return std::nullopt;
    std::optional<T> value = std::move(entry.value);
    entry.value.reset();
    return value;
  }
  /// Drops every value kept (a new epoch starts its places again at 0).
  void clear() {
    for (Entry& entry : entries_) entry.value.reset();
  }
  std::size_t capacity() const { return entries_.size(); }

 private:
  struct Entry {
    std::int64_t place = 0;
    std::optional<T> value;
  };

  Entry& at(std::int64_t place) {
    const auto count = static_cast<std::int64_t>(entries_.size());
    return entries_[static_cast<std::size_t>(((place % count) + count) % count)];
  }

  std::vector<Entry> entries_;
};

}  // namespace dlreset::data::detail
