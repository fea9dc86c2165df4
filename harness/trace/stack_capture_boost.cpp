// Stack capture with Boost.Stacktrace's backtrace backend: file:line frames from DWARF.
#include <boost/stacktrace.hpp>

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "harness/trace/stack_trace.h"

namespace dlreset::trace {

std::shared_ptr<const StackCapture> StackCapture::capture(std::size_t skip) {
  constexpr std::size_t kMaxDepth = 96;
  auto result = std::make_shared<StackCapture>();
  // +1 drops this function's own frame.
  boost::stacktrace::stacktrace stack(skip + 1, kMaxDepth);
  result->addresses_.reserve(stack.size());
  for (const auto& frame : stack) {
    result->addresses_.push_back(reinterpret_cast<const void*>(frame.address()));
  }
  return result;
}

std::vector<StackFrame> StackCapture::frames() const {
  std::vector<StackFrame> out;
  out.reserve(addresses_.size());
  for (const void* address : addresses_) {
    // Every captured address is a return address: the instruction after the call. One byte
    // back is inside the call, so the line is the calling line, as Python reports it.
    const auto* call = static_cast<const char*>(address) - 1;
    boost::stacktrace::frame frame(
        reinterpret_cast<boost::stacktrace::frame::native_frame_ptr_t>(const_cast<char*>(call)));
    StackFrame symbolized;
    symbolized.function = frame.name();
    symbolized.file = frame.source_file();
    symbolized.line = static_cast<int>(frame.source_line());
    out.push_back(std::move(symbolized));
  }
  return out;
}

}  // namespace dlreset::trace
