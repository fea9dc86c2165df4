// The iterator's results that came back before their turn: each is taken at its own place, once,
// and a place that would overwrite another's result is refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/data/core/worker/transport/ordered_buffer.h"

namespace dlreset::data {
namespace {

TEST(OrderedBuffer, HandsEachResultOutAtItsOwnPlaceInTurn) {
  // Four places in flight, back in the order 2, 0, 3, 1; taken in the order sent.
  detail::OrderedBuffer<std::string> held(4);
  for (const std::int64_t place : {2, 0, 3, 1}) held.put(place, "result " + std::to_string(place));
  std::vector<std::string> taken;
  for (std::int64_t place = 0; place < 4; ++place) {
    if (std::optional<std::string> result = held.take(place)) taken.push_back(*result);
  }
  EXPECT_EQ(taken, (std::vector<std::string>{"result 0", "result 1", "result 2", "result 3"}));
}

TEST(OrderedBuffer, TakesAResultOnceAndNotAtAPlaceThatSharesItsEntry) {
  detail::OrderedBuffer<int> held(2);
  held.put(5, 50);
  int found = 0;
  for (const std::int64_t place : {1, 3, 7}) found += held.take(place).has_value() ? 1 : 0;  // same entry
  EXPECT_EQ(found, 0);
  EXPECT_EQ(held.take(5), std::optional<int>(50));
  EXPECT_EQ(held.take(5), std::nullopt);
}

TEST(OrderedBuffer, ReusesAnEntryOnceItsResultIsTaken) {
  // A loader's epoch: place p and p + capacity share an entry, one after the other.
  detail::OrderedBuffer<int> held(3);
  int taken = 0;
  for (std::int64_t place = 0; place < 30; ++place) {
    held.put(place, static_cast<int>(place));
    taken += held.take(place) == std::optional<int>(static_cast<int>(place)) ? 1 : 0;
  }
  EXPECT_EQ(taken, 30);
}

TEST(OrderedBuffer, RefusesAPlaceWhoseEntryHoldsAnotherPlacesResult) {
  detail::OrderedBuffer<int> held(2);
  held.put(0, 0);
  EXPECT_THROW(held.put(2, 2), std::logic_error);
  EXPECT_EQ(held.take(0), std::optional<int>(0));  // the result held is kept
}

TEST(OrderedBuffer, ClearDropsEveryResultForANewEpoch) {
  detail::OrderedBuffer<int> held(4);
  held.put(1, 1);
  held.put(2, 2);
  held.clear();
  int found = 0;
  for (std::int64_t place = 0; place < 4; ++place) found += held.take(place).has_value() ? 1 : 0;
  EXPECT_EQ(found, 0);
  EXPECT_EQ(held.capacity(), 4u);
}

}  // namespace
}  // namespace dlreset::data
