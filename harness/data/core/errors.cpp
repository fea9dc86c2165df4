#include "harness/data/core/errors.h"

#include <cxxabi.h>
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <typeinfo>
#include <utility>

namespace dlreset::data {

std::string exception_type_name(const std::exception& e) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status),
                                                   &std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(typeid(e).name());
}

namespace {
std::string worker_error_message(const std::string& loader, int worker_id, std::int64_t pid, const std::string& type,
                                 const std::string& message) {
  std::ostringstream out;
  // Torch's first line, word for word, is "Caught <type> in DataLoader worker process <id>.".
  out << "Caught " << type << " in DataLoader worker process " << worker_id;
  if (pid > 0) out << " (pid " << pid << ")";
  if (!loader.empty()) out << " of loader '" << loader << "'";
  out << ". Original message: " << message;
  return out.str();
}

int signal_of(int wait_status) { return WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0; }

std::string died_message(const std::string& loader, int worker_id, std::int64_t pid, int wait_status) {
  std::ostringstream out;
  // Torch's words, "pid(s)" included: it names every worker it found dead at once.
  out << "DataLoader worker (pid(s) " << pid << ") exited unexpectedly";
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    // Torch chains the error above to its SIGCHLD handler's, and raises that one alone when
    // the signal arrives outside the wait for data; both are torch's words for the same event,
    // so both are here, word for word ("is killed by signal: Killed. ").
    out << ": DataLoader worker (pid " << pid << ") is killed by signal: " << strsignal(sig) << ". It was worker "
        << worker_id;
    if (!loader.empty()) out << " of loader '" << loader << "'";
    out << ", ended by signal " << sig;
  } else {
    if (WIFEXITED(wait_status)) out << " with exit status " << WEXITSTATUS(wait_status);
    out << ". It was worker " << worker_id;
    if (!loader.empty()) out << " of loader '" << loader << "'";
  }
  out << "; the iterator cannot go on without it, so ask the DataLoader for a new one.";
  return out.str();
}

std::string interrupted_message(int signal_number) {
  std::ostringstream out;
  out << "Interrupted by signal " << signal_number << " (" << strsignal(signal_number)
      << ") while the DataLoader was running; its workers are being shut down.";
  return out.str();
}

std::string timeout_message(double timeout_s) {
  std::ostringstream out;
  out << "DataLoader timed out after " << timeout_s
      << " seconds: no batch arrived from the workers in that time. Raise the loader's timeout "
         "or find the worker that hangs.";
  return out.str();
}
}  // namespace

WorkerError::WorkerError(const std::string& loader, int worker_id, std::int64_t pid, std::string original_type,
                         std::string original_message)
    : DataLoaderError(worker_error_message(loader, worker_id, pid, original_type, original_message)),
      worker_id_(worker_id),
      pid_(pid),
      original_type_(std::move(original_type)),
      original_message_(std::move(original_message)) {}

WorkerDiedError::WorkerDiedError(const std::string& loader, int worker_id, std::int64_t pid, int wait_status)
    : DataLoaderError(died_message(loader, worker_id, pid, wait_status)),
      worker_id_(worker_id),
      pid_(pid),
      signal_(signal_of(wait_status)) {}

DataLoaderTimeoutError::DataLoaderTimeoutError(double timeout_s) : DataLoaderError(timeout_message(timeout_s)) {}

InterruptedError::InterruptedError(int signal_number)
    : std::runtime_error(interrupted_message(signal_number)), signal_number_(signal_number) {}

}  // namespace dlreset::data
