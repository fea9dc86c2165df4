// The DataLoader's errors: each message is a full sentence that names the value and the fix.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace dlreset::data {

/// The exception's type as C++ spells it ("std::runtime_error"): the "<type>" of PyTorch's
/// "Caught <type> in ...".
std::string exception_type_name(const std::exception& e);

/// Base of every error the data layer raises on purpose.
class DataLoaderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A dataset file is missing, unreadable or malformed. The message names the file.
class DatasetError : public DataLoaderError {
 public:
  using DataLoaderError::DataLoaderError;
};

/// An exception raised inside a worker, re-raised in the main process. Like PyTorch's
/// ExceptionWrapper it keeps the worker's id and the original message.
class WorkerError : public DataLoaderError {
 public:
  WorkerError(const std::string& loader, int worker_id, std::int64_t pid, std::string original_type,
              std::string original_message);
  int worker_id() const { return worker_id_; }
  std::int64_t pid() const { return pid_; }
  const std::string& original_type() const { return original_type_; }
  const std::string& original_message() const { return original_message_; }

 private:
  int worker_id_;
  std::int64_t pid_;
  std::string original_type_;
  std::string original_message_;
};

/// A worker process died without being asked to (killed, crashed, exited).
class WorkerDiedError : public DataLoaderError {
 public:
  WorkerDiedError(const std::string& loader, int worker_id, std::int64_t pid, int wait_status);
  int worker_id() const { return worker_id_; }
  std::int64_t pid() const { return pid_; }
  /// The signal that killed it, or 0 if it exited.
  int signal() const { return signal_; }

 private:
  int worker_id_;
  std::int64_t pid_;
  int signal_;
};

/// No batch arrived within `DataLoaderOptions::timeout_s`.
class DataLoaderTimeoutError : public DataLoaderError {
 public:
  explicit DataLoaderTimeoutError(double timeout_s);
};

/// The process was asked to stop (SIGINT, SIGTERM) while it waited for, or asked for, a batch.
/// Like Python's KeyboardInterrupt it is *not* a DataLoaderError: code that handles loader
/// failures must not swallow a request to stop. Unwinding it runs the iterators' destructors,
/// which shut the workers down.
class InterruptedError : public std::runtime_error {
 public:
  explicit InterruptedError(int signal_number);
  int signal_number() const { return signal_number_; }

 private:
  int signal_number_;
};

}  // namespace dlreset::data
