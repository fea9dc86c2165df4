// What the watched field costs on a store, against a plain pointer store.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "bench/benches.h"
#include "harness/trace/stack_trace.h"
#include "harness/trace/watched.h"

namespace dlreset::bench {

namespace {

enum Mode { kPlain, kDisarmed, kArmedCounting, kArmedCapturing };

struct Probe {
  std::int64_t calls = 0;
  static void count(void* context) { ++static_cast<Probe*>(context)->calls; }
  static void capture(void* context) {
    ++static_cast<Probe*>(context)->calls;
    benchmark::DoNotOptimize(trace::StackCapture::capture());
  }
};

/// pattern:0 alternates a live pointer and null, so half the stores are the live -> null
/// transition an armed field reacts to; pattern:1 stores live pointers only, as a loader does
/// when it keeps a new iterator (a reset happens at most once an epoch). Whether the field is
/// armed is decided at run time, as in the DataLoader, so the compiler cannot drop the check.
void BM_WatchedStore(benchmark::State& state) {
  const auto mode = static_cast<Mode>(state.range(0));
  const bool live_only = state.range(1) == 1;
  int value = 0;
  int other = 0;
  int* const values[2] = {&value, live_only ? &other : nullptr};
  Probe probe;
  std::size_t i = 0;
  if (mode == kPlain) {
    int* field = nullptr;
    for (auto _ : state) {
      field = values[i++ & 1];
      benchmark::DoNotOptimize(field);
      benchmark::ClobberMemory();
    }
  } else {
    trace::Watched<int*> field;
    if (mode == kArmedCounting) field.arm(&Probe::count, &probe);
    if (mode == kArmedCapturing) field.arm(&Probe::capture, &probe);
    for (auto _ : state) {
      field = values[i++ & 1];
      benchmark::DoNotOptimize(field.get());
      benchmark::ClobberMemory();
    }
  }
  static const char* const kLabels[] = {"plain pointer", "watched, disarmed", "watched, armed: count",
                                        "watched, armed: count and capture the stack"};
  state.SetLabel(std::string(kLabels[mode]) + (live_only ? ", live stores" : ", live and null stores"));
  state.counters["hook_calls"] = static_cast<double>(probe.calls);
}

}  // namespace

void register_watched_benchmarks() {
  benchmark::RegisterBenchmark("BM_WatchedStore", BM_WatchedStore)
      ->ArgNames({"mode", "pattern"})
      ->ArgsProduct({{kPlain, kDisarmed, kArmedCounting, kArmedCapturing}, {0, 1}})
      ->UseRealTime();
}

}  // namespace dlreset::bench
