#include "watch/tree/resource_sampler.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace dlreset::watch {

namespace {

constexpr const char* kVmstat = "/proc/vmstat";

/// A /proc or /sys file whole, with plain reads: this runs at every tick.
std::string read_small_file(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[8192];
  for (ssize_t got = 0; (got = ::read(fd, buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(got));
  ::close(fd);
  return text;
}

long read_oom_kill(const std::string& file) { return parse_oom_kill(read_small_file(file)); }

}  // namespace

long parse_oom_kill(const std::string& text) {
  for (std::size_t at = text.find("oom_kill "); at != std::string::npos; at = text.find("oom_kill ", at + 1)) {
    if (at == 0 || text[at - 1] == '\n') return std::strtol(text.c_str() + at + 9, nullptr, 10);
  }
  return -1;
}

std::string memory_cgroup_oom_file(pid_t pid) {
  std::istringstream lines(read_small_file("/proc/" + std::to_string(pid) + "/cgroup"));
  std::string v1, v2;
  for (std::string line; std::getline(lines, line);) {
    // "4:memory:/path" (v1), "0::/path" (v2).
    const std::size_t first = line.find(':');
    const std::size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = "," + line.substr(first + 1, second - first - 1) + ",";
    const std::string path = line.substr(second + 1);
    if (controllers.find(",memory,") != std::string::npos) v1 = "/sys/fs/cgroup/memory" + path + "/memory.oom_control";
    if (line.compare(0, 3, "0::") == 0) v2 = "/sys/fs/cgroup" + path + "/memory.events";
  }
  // The v1 memory controller, where there is one, is the one that limits memory.
  for (const std::string& file : {v1, v2}) {
    if (!file.empty() && read_oom_kill(file) >= 0) return file;
  }
  return "";
}

void ResourceSampler::begin_tick(double now_s) {
  tick_s_ = now_s;
  tick_rss_bytes_ = 0;
  shm_this_tick_.clear();
  whole_this_tick_.clear();
  files_this_tick_ = {kVmstat};
}

void ResourceSampler::sample_member(pid_t pid, int statm_fd, const std::string& oom_file) {
  MemberSample& sample = members_[pid];
  if (statm_fd >= 0) {
    char text[128] = {};
    const ssize_t got = ::pread(statm_fd, text, sizeof text - 1, 0);
    // "size resident shared text lib data dt", in pages. A process that is ending (dumping its
    // core, say) has let its memory go and reads 0: its last sample is the one before.
    char* rest = nullptr;
    if (got > 0) std::strtoull(text, &rest, 10);
    const std::uint64_t resident = rest != nullptr ? std::strtoull(rest, nullptr, 10) : 0;
    if (resident > 0) {
      sample.rss_bytes = resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
      sample.time_s = tick_s_;
      whole_this_tick_.insert(pid);
    }
  }
  tick_rss_bytes_ += sample.rss_bytes;
  const std::string proc = "/proc/" + std::to_string(pid);
  struct stat ns {};
  if (::stat((proc + "/ns/mnt").c_str(), &ns) == 0) {
    sample.mount_ns = {ns.st_dev, ns.st_ino};
    if (shm_this_tick_.insert(sample.mount_ns).second) {
      struct statvfs fs {};
      ++shm_reads_;
      if (::statvfs((proc + "/root/dev/shm").c_str(), &fs) == 0 && fs.f_blocks > 0) {
        const std::uint64_t block = fs.f_frsize != 0 ? fs.f_frsize : fs.f_bsize;
        shm_[sample.mount_ns] = {tick_s_, (fs.f_blocks - fs.f_bfree) * block, fs.f_blocks * block};
      }
    }
  }
  sample.oom_file = oom_file;
  if (!oom_file.empty()) files_this_tick_.insert(oom_file);
}

void ResourceSampler::end_tick() {
  tree_rss_bytes_ = tick_rss_bytes_;
  ticked_ = true;
  for (const std::string& file : files_this_tick_) {
    Counter& counter = counters_[file];
    counter.previous = counter.last;
    counter.last = read_oom_kill(file);
  }
  for (const pid_t pid : whole_this_tick_) {
    MemberSample& sample = members_[pid];
    sample.oom_before = sample.oom_at_sample;
    const auto file = counters_.find(sample.oom_file);
    sample.oom_at_sample = {counters_[kVmstat].last, file != counters_.end() ? file->second.last : -1};
  }
}

OomCount ResourceSampler::count_now(const std::string& file, long sampled_before) {
  OomCount count;
  count.source = file;
  count.at_exit = read_oom_kill(file);
  const auto found = counters_.find(file);
  // Else the count two ticks back: a kill between the last tick and the exit's report, or just
  // before that tick, still shows as a rise.
  if (sampled_before >= 0)
    count.before = sampled_before;
  else if (found != counters_.end())
    count.before = found->second.previous >= 0 ? found->second.previous : found->second.last;
  else
    count.before = count.at_exit;
  return count;
}

DeathEvidence ResourceSampler::at_exit(pid_t pid, const std::string& oom_file, bool read_oom) {
  DeathEvidence evidence;
  const auto member = members_.find(pid);
  std::pair<long, long> before{-1, -1};
  if (member != members_.end()) {
    before = member->second.oom_before.first >= 0 ? member->second.oom_before : member->second.oom_at_sample;
    if (member->second.rss_bytes > 0) {
      evidence.rss_bytes = member->second.rss_bytes;
      evidence.sampled_s = member->second.time_s;
    }
    if (ticked_) evidence.tree_rss_bytes = tree_rss_bytes_;
    const auto shm = shm_.find(member->second.mount_ns);
    if (shm != shm_.end()) evidence.shm = shm->second;
    members_.erase(member);
  }
  if (!read_oom) return evidence;
  for (const auto& [file, sampled_before] :
       {std::pair(std::string(kVmstat), before.first), std::pair(oom_file, before.second)}) {
    if (file.empty()) continue;
    OomCount count = count_now(file, sampled_before);
    if (count.at_exit >= 0 && count.before >= 0) evidence.oom.push_back(count);
  }
  return evidence;
}

}  // namespace dlreset::watch
