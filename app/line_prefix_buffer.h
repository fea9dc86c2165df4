// A stream buffer that starts every line it passes on with a prefix: how each rank of a job
// marks its reset tracebacks ("[rank 1] ") on the terminal they share.
#pragma once

#include <streambuf>
#include <string>
#include <utility>

namespace dlreset::app {

/// Writes through to `target`, inserting `prefix` before the first character of every line.
/// Unbuffered, so lines of different ranks interleave only at line boundaries as far as each
/// rank's own writes allow.
class LinePrefixBuffer : public std::streambuf {
 public:
  LinePrefixBuffer(std::streambuf* target, std::string prefix) : target_(target), prefix_(std::move(prefix)) {}

 protected:
  int overflow(int character) override {
    if (character == traits_type::eof()) return traits_type::not_eof(character);
    if (at_line_start_ && target_->sputn(prefix_.data(), static_cast<std::streamsize>(prefix_.size())) !=
                              static_cast<std::streamsize>(prefix_.size())) {
      return traits_type::eof();
    }
    at_line_start_ = character == '\n';
    return target_->sputc(static_cast<char>(character));
  }
  int sync() override { return target_->pubsync(); }

 private:
  std::streambuf* target_;
  std::string prefix_;
  bool at_line_start_ = true;
};

}  // namespace dlreset::app
