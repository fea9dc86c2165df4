#include "harness/data/core/worker/transport/parent_only_fds.h"

#include <algorithm>
#include <mutex>

namespace dlreset::data::detail {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<int> fds;
  std::vector<std::pair<void*, std::size_t>> mappings;
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

void register_parent_only_mapping(void* base, std::size_t bytes) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.mappings.emplace_back(base, bytes);
}

void unregister_parent_only_mapping(void* base) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it =
      std::find_if(r.mappings.begin(), r.mappings.end(), [base](const auto& mapping) { return mapping.first == base; });
  if (it != r.mappings.end()) r.mappings.erase(it);
}

std::vector<std::pair<void*, std::size_t>> parent_only_mappings() {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  return r.mappings;
}

}  // namespace dlreset::data::detail
