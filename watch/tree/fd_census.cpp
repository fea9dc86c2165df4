#include "watch/tree/fd_census.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace dlreset::watch {

std::optional<FdCounts> count_fds(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd";
  DIR* folder = ::opendir(path.c_str());
  if (folder == nullptr) return std::nullopt;
  FdCounts counts;
  const int folder_fd = ::dirfd(folder);
  while (const dirent* entry = ::readdir(folder)) {
    if (entry->d_name[0] == '.') continue;
    char link[256];
    // A descriptor closed since the directory was read is simply not counted.
    const ssize_t got = ::readlinkat(folder_fd, entry->d_name, link, sizeof link);
    if (got <= 0) continue;
    counts.add(std::string_view(link, static_cast<std::size_t>(got)));
  }
  ::closedir(folder);
  return counts;
}

}  // namespace dlreset::watch
