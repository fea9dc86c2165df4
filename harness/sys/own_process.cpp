#include "harness/sys/own_process.h"

#include <sys/resource.h>
#include <sys/time.h>

#include <filesystem>
#include <system_error>

namespace dlreset::sys {

OwnUsage own_usage() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  OwnUsage own;
  own.cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  own.minor_faults = usage.ru_minflt;
  own.voluntary_switches = usage.ru_nvcsw;
  own.involuntary_switches = usage.ru_nivcsw;
  return own;
}

std::string own_binary_dir() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string() : self.parent_path().string();
}

}  // namespace dlreset::sys
