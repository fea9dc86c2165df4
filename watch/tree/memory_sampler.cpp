#include "watch/tree/memory_sampler.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "harness/sys/clock.h"

namespace dlreset::watch {

namespace {

/// The most of one core the reads may take: a tick whose reads took longer than this share of the
/// interval puts the next one off, so that a program of many GiB, whose reads walk millions of
/// pages, is sampled less often rather than slowed. A read of a torch process of 180 MiB took
/// 6 ms here; at 0.4%, the watcher with sampling stays near 1.5% of a core on the benchmark's
/// loop (docs/results.md, "Watcher overhead").
constexpr double kMaxShare = 0.004;

/// The watcher's CPU time (its thread's: the watch loop is one thread).
double thread_cpu_s() { return sys::seconds_on(CLOCK_THREAD_CPUTIME_ID); }

/// The value of the line "name:   123 kB" in bytes; empty where there is no such line.
std::optional<std::uint64_t> field_bytes(std::string_view text, std::string_view name) {
  for (std::size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
    const std::size_t colon = at + name.size();
    if ((at != 0 && text[at - 1] != '\n') || colon >= text.size() || text[colon] != ':') continue;
    const std::string digits(text.substr(colon + 1, 32));
    return std::strtoull(digits.c_str(), nullptr, 10) * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::optional<MemoryUse> parse_smaps_rollup(std::string_view text) {
  const std::optional<std::uint64_t> pss = field_bytes(text, "Pss");
  if (!pss) return std::nullopt;
  MemoryUse use;
  use.pss_bytes = *pss;
  use.private_dirty_bytes = field_bytes(text, "Private_Dirty").value_or(0);
  use.shared_bytes = field_bytes(text, "Shared_Clean").value_or(0) + field_bytes(text, "Shared_Dirty").value_or(0);
  return use;
}

MemorySampler::MemorySampler(double interval_s) { record_.interval_s = interval_s; }

bool MemorySampler::begin_tick(double now_s) {
  if (record_.interval_s <= 0.0) return false;
  tick_ = MemoryTick{};
  tick_.time_s = now_s;
  tick_.whole = now_s >= next_s_;
  tick_cpu_s_ = 0.0;
  return tick_.whole;
}

void MemorySampler::sample_member(pid_t pid, int smaps_fd) {
  if (smaps_fd < 0) return;
  char text[4096];
  // The file is made anew at each read from 0: a pread of the open descriptor reads it again.
  const double began_s = thread_cpu_s();
  const ssize_t got = ::pread(smaps_fd, text, sizeof text, 0);
  tick_cpu_s_ += thread_cpu_s() - began_s;
  ++record_.reads;
  if (got > 0) {
    const std::optional<MemoryUse> use = parse_smaps_rollup(std::string_view(text, static_cast<std::size_t>(got)));
    // A process that is ending has let its memory go and reads 0: its last sample is the one before.
    if (use && use->pss_bytes > 0) tick_.members.emplace_back(pid, *use);
  }
}

void MemorySampler::end_tick() {
  if (record_.interval_s <= 0.0) return;
  const double cpu_s = tick_cpu_s_;
  record_.read_cpu_s += cpu_s;
  // A young member's first read counts against the share too: it puts the next whole tick off.
  const double wait_s = std::max(tick_.whole ? record_.interval_s : 0.0, cpu_s / kMaxShare);
  if (tick_.whole && wait_s > record_.interval_s) ++record_.stretched;
  next_s_ = std::max(tick_.whole ? 0.0 : next_s_, tick_.time_s + wait_s);
  if (!tick_.members.empty()) record_.ticks.push_back(std::move(tick_));
  tick_ = MemoryTick{};
}

}  // namespace dlreset::watch
