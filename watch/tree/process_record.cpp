#include "watch/tree/process_record.h"

#include <sys/wait.h>

#include <cstring>

namespace dlreset::watch {

bool is_python_program(const std::string& name) {
  const std::size_t slash = name.rfind('/');
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  if (base.compare(0, 6, "python") != 0) return false;
  // python, python3, python3.11, python3.11d; not "pythonista".
  for (std::size_t i = 6; i < base.size(); ++i) {
    const char c = base[i];
    if (!(c >= '0' && c <= '9') && c != '.' && !(i + 1 == base.size() && c == 'd')) return false;
  }
  return true;
}

const char* to_string(ProcessRole role) {
  switch (role) {
    case ProcessRole::root: return "root";
    case ProcessRole::worker: return "worker";
    case ProcessRole::helper: return "helper";
    case ProcessRole::program: return "program";
    case ProcessRole::other: return "other";
  }
  return "other";
}

const char* to_string(WorkerStart start) {
  switch (start) {
    case WorkerStart::none: return "none";
    case WorkerStart::fork: return "fork";
    case WorkerStart::spawn: return "spawn";
    case WorkerStart::forkserver: return "forkserver";
    case WorkerStart::dlreset_spawn: return "dlreset-spawn";
  }
  return "none";
}

std::string describe_wait_status(const std::optional<int>& wait_status) {
  if (!wait_status) return "unknown";
  if (WIFEXITED(*wait_status)) return "exit " + std::to_string(WEXITSTATUS(*wait_status));
  if (WIFSIGNALED(*wait_status)) {
    const int signal_number = WTERMSIG(*wait_status);
    return "signal " + std::to_string(signal_number) + " (" + ::strsignal(signal_number) + ")";
  }
  return "unknown";
}

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace dlreset::watch
