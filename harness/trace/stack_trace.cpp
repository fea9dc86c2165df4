#include "harness/trace/stack_trace.h"

#include <sstream>

namespace dlreset::trace {

bool StackFrame::is_project_frame() const {
  return !file.empty() && file.front() != '/' && file.rfind("../", 0) != 0 && file.rfind("./", 0) != 0;
}

bool StackFrame::is_system_frame() const {
  // A relative path that is not dlreset's is another build's: glibc's "../csu/libc-start.c".
  return file.empty() || file.rfind("/usr/", 0) == 0 || (file.front() != '/' && !is_project_frame());
}

std::string short_function_name(const std::string& function) {
  std::string name = function;
  // "(anonymous namespace)" holds parentheses that are not a parameter list.
  const std::string anonymous = "(anonymous namespace)";
  for (auto at = name.find(anonymous); at != std::string::npos; at = name.find(anonymous)) {
    name.replace(at, anonymous.size(), "{anonymous}");
  }
  // Cut the parameter list: the first '(' outside template brackets, unless it belongs to
  // "operator()".
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') ++depth;
    if (c == '>' && depth > 0) --depth;
    if (c == '(' && depth == 0) {
      if (i >= 8 && name.compare(i - 8, 8, "operator") == 0) {
        ++i;  // skip "()" of operator()
        continue;
      }
      name.resize(i);
      break;
    }
  }
  // A return type, if the demangler printed one, ends at the last space outside brackets.
  depth = 0;
  std::size_t last_space = std::string::npos;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>' && depth > 0) --depth;
    if (name[i] == ' ' && depth == 0) last_space = i;
  }
  if (last_space != std::string::npos && name.find("operator") == std::string::npos) {
    name.erase(0, last_space + 1);
  }
  const std::string prefix = "dlreset::";
  if (name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
  return name;
}

std::string format_traceback(const std::vector<StackFrame>& frames, const TracebackOptions& options) {
  std::size_t first = 0;  // innermost frame to show
  auto dropped = [&](const StackFrame& frame) {
    for (const auto& needle : options.drop_innermost) {
      if (frame.function.find(needle) != std::string::npos) return true;
    }
    return false;
  };
  while (first < frames.size() && dropped(frames[first])) ++first;

  std::ostringstream out;
  out << "Traceback (most recent call last)";
  if (!options.title.empty()) out << ", " << options.title;
  out << ":\n";
  std::size_t hidden = 0;
  auto flush_hidden = [&] {
    if (hidden > 0) {
      out << "  [" << hidden << (options.show_program_frames ? " system" : "") << (hidden == 1 ? " frame" : " frames")
          << (options.show_program_frames ? "" : " outside dlreset") << "]\n";
      hidden = 0;
    }
  };
  for (std::size_t i = frames.size(); i-- > first;) {
    const StackFrame& frame = frames[i];
    const bool shown = frame.is_project_frame() || (options.show_program_frames && !frame.is_system_frame());
    if (options.project_frames_only && !shown) {
      ++hidden;
      continue;
    }
    flush_hidden();
    out << "  File \"" << (frame.file.empty() ? "??" : frame.file) << "\", line " << frame.line << ", in "
        << short_function_name(frame.function);
    if (options.mirror) {
      const std::string mirrored = options.mirror(frame.file);
      if (!mirrored.empty()) out << "  (mirrors " << mirrored << ")";
    }
    out << "\n";
    if (options.source) {
      std::string code = options.source(frame.file, frame.line);
      const auto first = code.find_first_not_of(" \t");
      if (first != std::string::npos) out << "    " << code.substr(first) << "\n";
    }
  }
  flush_hidden();
  return out.str();
}

}  // namespace dlreset::trace
