#include "bench/support/memory_sampler.h"

#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/sys/proc_stat.h"

namespace dlreset::bench {

namespace {

long pss_kib(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  std::string key;
  long value = 0;
  std::string unit;
  while (in >> key) {
    if (key == "Pss:") {
      in >> value >> unit;
      return value;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

/// This process and its descendants, found through every process's parent pid.
std::vector<long> family() {
  std::map<long, long> parent_of;
  for (const pid_t pid : sys::list_process_ids()) {
    if (const std::optional<sys::ProcStat> stat = sys::read_proc_stat_of(pid)) parent_of[pid] = stat->parent;
  }
  std::vector<long> members = {static_cast<long>(::getpid())};
  for (std::size_t i = 0; i < members.size(); ++i) {
    for (const auto& [pid, ppid] : parent_of) {
      if (ppid == members[i]) members.push_back(pid);
    }
  }
  return members;
}

long total_kib() {
  long total = 0;
  for (const long pid : family()) total += pss_kib(pid);
  return total;
}

}  // namespace

MemorySampler::MemorySampler(int period_ms) {
  peak_kib_ = total_kib();
  thread_ = std::thread([this, period_ms] {
    while (!stop_.load()) {
      const long now = total_kib();
      long peak = peak_kib_.load();
      while (now > peak && !peak_kib_.compare_exchange_weak(peak, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
    }
  });
}

MemorySampler::~MemorySampler() {
  stop_ = true;
  thread_.join();
}

double MemorySampler::current_mib() { return total_kib() / 1024.0; }

}  // namespace dlreset::bench
