#include "harness/trace/watched.h"

#include <gtest/gtest.h>

#include <memory>

namespace dlreset::trace {
namespace {

struct HookCount {
  int calls = 0;
  static void hook(void* context) { ++static_cast<HookCount*>(context)->calls; }
};

TEST(Watched, HookFiresOnlyWhenNullReplacesALiveValue) {
  HookCount count;
  Watched<std::shared_ptr<int>> field;
  field.arm(&HookCount::hook, &count);

  field = nullptr;  // null over null
  EXPECT_EQ(count.calls, 0);
  field = std::make_shared<int>(1);  // live over null
  EXPECT_EQ(count.calls, 0);
  field = std::make_shared<int>(2);  // live over live
  EXPECT_EQ(count.calls, 0);
  field = nullptr;  // null over live: the one transition that counts
  EXPECT_EQ(count.calls, 1);
  field = nullptr;
  EXPECT_EQ(count.calls, 1);
  field = std::make_shared<int>(3);
  field = std::shared_ptr<int>();
  EXPECT_EQ(count.calls, 2);
}

TEST(Watched, DisarmedFieldNeverCallsItsHook) {
  HookCount count;
  Watched<int*> field;
  int value = 7;
  field.arm(&HookCount::hook, &count);
  field.disarm();
  field = &value;
  field = nullptr;
  EXPECT_EQ(count.calls, 0);
  EXPECT_FALSE(field.armed());
}

struct SeesOldValue {
  Watched<std::shared_ptr<int>>* field = nullptr;
  int seen = -1;
  static void hook(void* context) {
    auto* self = static_cast<SeesOldValue*>(context);
    self->seen = *self->field->get();
  }
};

TEST(Watched, HookRunsBeforeTheOldValueIsReleased) {
  Watched<std::shared_ptr<int>> field(std::make_shared<int>(42));
  SeesOldValue probe;
  probe.field = &field;
  field.arm(&SeesOldValue::hook, &probe);
  field = nullptr;
  EXPECT_EQ(probe.seen, 42);
  EXPECT_EQ(field.get(), nullptr);
}

TEST(Watched, WorksWithUniquePointers) {
  HookCount count;
  Watched<std::unique_ptr<int>> field;
  field.arm(&HookCount::hook, &count);
  field = std::make_unique<int>(5);
  EXPECT_EQ(*field.get(), 5);
  field = nullptr;
  EXPECT_EQ(count.calls, 1);
}

}  // namespace
}  // namespace dlreset::trace
