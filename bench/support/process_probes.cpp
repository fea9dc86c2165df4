// What the loader benchmarks read of a process from /proc.
#include "bench/support/process_probes.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "harness/sys/proc_stat.h"

namespace dlreset::bench {

double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double status_field(const std::string& pid, const std::string& field) {
  std::ifstream status("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1));
  }
  return 0.0;
}

std::optional<double> reset_peak_rss_kib() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
  clear_refs.flush();
  if (!clear_refs) return std::nullopt;
  return status_field("self", "VmRSS");
}

double process_cpu_s(std::int64_t pid) {
  std::ifstream schedstat("/proc/" + std::to_string(pid) + "/schedstat");
  double on_cpu_ns = 0.0;
  return schedstat >> on_cpu_ns ? on_cpu_ns * 1e-9 : 0.0;
}

double process_minor_faults(std::int64_t pid) {
  const std::optional<sys::ProcStat> stat = sys::read_proc_stat_of(static_cast<pid_t>(pid));
  return stat ? static_cast<double>(stat->minor_faults) : 0.0;
}

double stolen_s() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double ticks[8] = {};
  stat >> cpu;
  for (double& field : ticks) stat >> field;
  return stat ? ticks[7] / static_cast<double>(::sysconf(_SC_CLK_TCK)) : 0.0;
}

double stolen_share(double stolen, double wall_s) {
  const double cpus = static_cast<double>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  return wall_s > 0.0 ? stolen / (cpus * wall_s) : 0.0;
}

}  // namespace dlreset::bench
