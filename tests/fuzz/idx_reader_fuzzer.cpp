// libFuzzer target for the IDX reader: any bytes must either parse into a header and a payload
// of exactly the declared size, or fail with a DatasetError. Anything else (a crash, a sanitizer
// report, another exception, an allocation beyond libFuzzer's limit) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/data/core/datasets/idx_reader.h"
#include "harness/data/core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using dlreset::data::DatasetError;
  using dlreset::data::IdxHeader;
  const std::string name = "fuzz-input";
  bool header_ok = false;
  IdxHeader header_only;
  try {
    header_only = dlreset::data::parse_idx_header(data, size, name);
    header_ok = true;
    if (header_only.dims.empty() || header_only.dims.size() > 4) std::abort();
  } catch (const DatasetError&) {
  }
  try {
    IdxHeader header;
    const std::vector<std::uint8_t> payload = dlreset::data::parse_idx(data, size, name, &header);
    // A whole file parses only if its header does, to the same header.
    if (!header_ok || header.dims != header_only.dims) std::abort();
    if (payload.size() != static_cast<std::size_t>(header.element_count())) std::abort();
  } catch (const DatasetError&) {
  }
  return 0;
}
