// Stack capture and Python-style rendering for the watched iterator field.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dlreset::trace {

/// One symbolized frame. `file` is repository-relative for dlreset's own sources (the build
/// maps the source directory away), absolute for system code, empty when unknown.
struct StackFrame {
  std::string function;
  std::string file;
  int line = 0;

  /// True for frames of dlreset's own sources: the ones a reader of a reset trace wants.
  bool is_project_frame() const;
  /// True for frames of the system's code: no file known, one under /usr (libraries, and
  /// headers such as the standard library's, GoogleTest's or an installed dlreset's), or a
  /// relative one that is not dlreset's (glibc's debug info names "../csu/libc-start.c").
  bool is_system_frame() const;
};

/// A captured stack: return addresses only. Capturing walks the frame chain and costs a few
/// microseconds; symbolizing reads DWARF line tables and costs milliseconds, so it happens only
/// when someone asks for the frames.
class StackCapture {
 public:
  /// Captures the calling thread's stack. `skip` drops that many innermost frames beyond the
  /// capture function itself.
  static std::shared_ptr<const StackCapture> capture(std::size_t skip = 0);

  /// The symbolized frames, innermost first.
  std::vector<StackFrame> frames() const;
  std::size_t depth() const { return addresses_.size(); }

 private:
  std::vector<const void*> addresses_;
};

/// Maps a repository-relative source file to the upstream file it mirrors (for instance
/// "repro/fetching.cpp" to "pytorch_lightning/utilities/fetching.py @ 1.5.0"); empty if none.
using MirrorLookup = std::function<std::string(const std::string& source_file)>;

/// The text of line `line` of a repository-relative source file; empty if unknown.
using SourceLookup = std::function<std::string(const std::string& source_file, int line)>;

struct TracebackOptions {
  /// Shown on the "Traceback" line, e.g. "iterator of loader 'train' set to null (epoch 1, fit)".
  std::string title;
  /// Innermost frames whose function contains one of these are dropped: the hook's own frames.
  std::vector<std::string> drop_innermost;
  /// Non-project frames are summarized as one "[N frames outside dlreset]" line.
  bool project_frames_only = true;
  /// With project_frames_only, frames of the program built on dlreset are shown too (files with
  /// an absolute path outside /usr, which that program's build does not make relative); only
  /// system frames are summarized then, as "[N system frames]".
  bool show_program_frames = false;
  /// When set, each frame names the upstream file it mirrors.
  MirrorLookup mirror;
  /// When set, each frame is followed by its source line, as Python shows it.
  SourceLookup source;
};

/// Renders frames (innermost first, as `StackCapture::frames()` returns them) like a Python
/// traceback: outermost first, innermost last, `File "path", line N, in function`.
std::string format_traceback(const std::vector<StackFrame>& frames, const TracebackOptions& options);

/// "dlreset::repro::DataFetcher::reset()" -> "repro::DataFetcher::reset": no parameters, no
/// return type, no "dlreset::" prefix. Readers of a traceback want the name, not the signature.
std::string short_function_name(const std::string& function);

}  // namespace dlreset::trace
