#include "harness/data/worker/parent_only_fds.h"

#include <algorithm>
#include <mutex>

namespace dlreset::data {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<int> fds;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

void register_parent_only_fd(int fd) {
  if (fd < 0) return;
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.fds.push_back(fd);
}

void unregister_parent_only_fd(int fd) {
  if (fd < 0) return;
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = std::find(r.fds.begin(), r.fds.end(), fd);
  if (it != r.fds.end()) r.fds.erase(it);
}

std::vector<int> parent_only_fds() {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  return r.fds;
}

}  // namespace dlreset::data
