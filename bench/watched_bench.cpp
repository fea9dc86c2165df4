// What the watched field costs on a store, against a plain pointer store.
#include <benchmark/benchmark.h>

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

/// Stores alternate between a live pointer and null, so half of them are the live -> null
/// transition an armed field reacts to.
void BM_WatchedStore(benchmark::State& state) {
  const auto mode = static_cast<Mode>(state.range(0));
  int value = 0;
  int* const values[2] = {&value, nullptr};
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
  state.SetLabel(kLabels[mode]);
  state.counters["hook_calls"] = static_cast<double>(probe.calls);
}

}  // namespace

void register_watched_benchmarks() {
  benchmark::RegisterBenchmark("BM_WatchedStore", BM_WatchedStore)
      ->ArgName("mode")
      ->DenseRange(kPlain, kArmedCapturing)
      ->UseRealTime();
}

}  // namespace dlreset::bench
