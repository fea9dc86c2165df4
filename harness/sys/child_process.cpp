#include "harness/sys/child_process.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <cstring>

namespace dlreset::sys {

std::vector<char*> exec_pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

std::vector<std::string> environment_with(const std::vector<std::string>& overrides) {
  const auto overridden = [&](const char* entry) {
    for (const std::string& override : overrides) {
      // The name and its '='; an override without one names nothing, and replaces nothing.
      const std::size_t equals = override.find('=');
      if (equals != std::string::npos && std::strncmp(entry, override.c_str(), equals + 1) == 0) return true;
    }
    return false;
  };
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!overridden(*entry)) environment.emplace_back(*entry);
  }
  environment.insert(environment.end(), overrides.begin(), overrides.end());
  return environment;
}

bool die_with_parent(int signal, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, signal);
  return ::getppid() == parent;
}

}  // namespace dlreset::sys
