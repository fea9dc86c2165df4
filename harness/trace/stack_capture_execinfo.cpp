// Stack capture without Boost: glibc's backtrace() to capture, dladdr and the C++ demangler for
// names, and binutils' addr2line (when installed) for file:line. The build uses it where
// Boost.Stacktrace is not available, such as a GPU machine with LibTorch from pip.
#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "harness/trace/stack_trace.h"

namespace dlreset::trace {

namespace {

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                                        &std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : std::string(name);
}

/// addr2line joins the compiler's working directory (the build directory) to the file name the
/// build already made repository-relative; take it off again so frames read as with Boost.
std::string repository_relative(std::string path) {
  const std::string build_dir = DLRESET_BUILD_DIR "/";
  if (path.compare(0, build_dir.size(), build_dir) == 0) path.erase(0, build_dir.size());
  return path;
}

/// What addr2line knows of one address: its frames, innermost first (more than one when calls
/// were inlined there).
using Places = std::vector<StackFrame>;

/// Asks addr2line for the frames of `offsets` in `module`: empty entries when it is missing or
/// knows nothing. `-a` prints each address before its frames, which is how the output, with a
/// varying number of inlined frames per address, is split back per address.
std::vector<Places> addr2line(const std::string& module, const std::vector<std::uintptr_t>& offsets) {
  std::vector<Places> result(offsets.size());
  std::ostringstream command;
  command << "addr2line -a -i -f -C -e '" << module << "'";
  for (const std::uintptr_t offset : offsets) command << " 0x" << std::hex << offset;
  command << " 2>/dev/null";
  FILE* pipe = ::popen(command.str().c_str(), "r");
  if (pipe == nullptr) return result;
  auto read_line = [pipe](std::string& text) {
    char buffer[4096];
    if (std::fgets(buffer, sizeof buffer, pipe) == nullptr) return false;
    text = buffer;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return true;
  };
  std::string line;
  std::string place;
  long index = -1;
  while (read_line(line)) {
    if (line.compare(0, 2, "0x") == 0) {
      ++index;
      continue;
    }
    if (index < 0 || index >= static_cast<long>(result.size()) || !read_line(place)) break;
    StackFrame frame;
    if (line != "??") frame.function = line;
    const auto colon = place.rfind(':');
    if (colon != std::string::npos && place.compare(0, 2, "??") != 0) {
      std::string number = place.substr(colon + 1);
      const auto space = number.find(' ');  // "12 (discriminator 3)"
      if (space != std::string::npos) number.resize(space);
      frame.file = repository_relative(place.substr(0, colon));
      frame.line = std::atoi(number.c_str());
    }
    result[static_cast<std::size_t>(index)].push_back(std::move(frame));
  }
  ::pclose(pipe);
  return result;
}

}  // namespace

std::shared_ptr<const StackCapture> StackCapture::capture(std::size_t skip) {
  constexpr int kMaxDepth = 96;
  void* frames[kMaxDepth];
  const int depth = ::backtrace(frames, kMaxDepth);
  auto result = std::make_shared<StackCapture>();
  // +1 drops this function's own frame.
  for (int i = static_cast<int>(skip) + 1; i < depth; ++i) result->addresses_.push_back(frames[i]);
  return result;
}

std::vector<StackFrame> StackCapture::frames() const {
  std::vector<Places> places(addresses_.size());
  // Group by module so each module costs one addr2line run.
  std::map<std::string, std::vector<std::size_t>> by_module;
  std::vector<std::uintptr_t> offsets(addresses_.size());
  for (std::size_t i = 0; i < addresses_.size(); ++i) {
    // A return address points after the call; one byte back is the calling line.
    const auto* call = static_cast<const char*>(addresses_[i]) - 1;
    Dl_info info{};
    if (::dladdr(call, &info) == 0) continue;
    StackFrame fallback;
    if (info.dli_sname != nullptr) fallback.function = demangle(info.dli_sname);
    places[i].push_back(fallback);
    if (info.dli_fname == nullptr) continue;
    offsets[i] = reinterpret_cast<std::uintptr_t>(call) - reinterpret_cast<std::uintptr_t>(info.dli_fbase);
    by_module[info.dli_fname].push_back(i);
  }
  for (const auto& [module, indices] : by_module) {
    std::vector<std::uintptr_t> module_offsets;
    for (const std::size_t i : indices) module_offsets.push_back(offsets[i]);
    std::vector<Places> found = addr2line(module, module_offsets);
    for (std::size_t k = 0; k < indices.size(); ++k) {
      if (!found[k].empty()) places[indices[k]] = std::move(found[k]);
    }
  }
  std::vector<StackFrame> out;
  for (Places& frames : places) {
    if (frames.empty()) frames.emplace_back();
    for (StackFrame& frame : frames) out.push_back(std::move(frame));
  }
  return out;
}

}  // namespace dlreset::trace
