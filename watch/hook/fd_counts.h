// A process's open file descriptors by type, as /proc/PID/fd links name them: what the watcher
// counts at each pass's start (watch/tree/fd_census.h), so that descriptors that pile up from
// pass to pass can be told by type (docs/watch.md, "Descriptors that pile up").
#pragma once

#include <string_view>

namespace dlreset::watch {

/// The four types a descriptor's link names.
enum class FdType { pipe, socket, anon_inode, file };

struct FdCounts {
  long pipes = 0;        ///< "pipe:[N]": a multiprocessing queue's or a worker's pipe.
  long sockets = 0;      ///< "socket:[N]".
  long anon_inodes = 0;  ///< "anon_inode:[eventfd]", "anon_inode:[eventpoll]", ...
  long files = 0;        ///< Anything else: a path (a file, a device).
  /// A tensor's shared memory ("/dev/shm/torch_...", "/memfd:..."), which torch's file_descriptor
  /// strategy keeps open while the batch lives: its count follows the batches the program holds
  /// at that moment, not its loop, so it is kept apart and never judged as piling up.
  long shared_memory = 0;

  /// The count of one type.
  long of(FdType type) const {
    switch (type) {
      case FdType::pipe: return pipes;
      case FdType::socket: return sockets;
      case FdType::anon_inode: return anon_inodes;
      case FdType::file: return files;
    }
    return 0;
  }

  /// Counts one descriptor by the text its /proc/PID/fd link reads.
  void add(std::string_view link) {
    if (link.substr(0, 5) == "pipe:") {
      ++pipes;
    } else if (link.substr(0, 7) == "socket:") {
      ++sockets;
    } else if (link.substr(0, 11) == "anon_inode:") {
      ++anon_inodes;
    } else if (link.substr(0, 9) == "/dev/shm/" || link.substr(0, 7) == "/memfd:") {
      ++shared_memory;
    } else {
      ++files;
    }
  }
};

/// "pipes", "sockets", "anon inodes", "files".
inline const char* plural_name(FdType type) {
  switch (type) {
    case FdType::pipe: return "pipes";
    case FdType::socket: return "sockets";
    case FdType::anon_inode: return "anon inodes";
    case FdType::file: return "files";
  }
  return "files";
}

}  // namespace dlreset::watch
