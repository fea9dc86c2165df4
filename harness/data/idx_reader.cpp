#include "harness/data/idx_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <sstream>

#include "harness/data/errors.h"

namespace dlreset::data {

namespace {

constexpr std::uint8_t kUnsignedByte = 0x08;
constexpr std::int64_t kMaxElements = std::int64_t{1} << 34;  // 16 GiB: far beyond any MNIST

struct GzCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw DatasetError("IDX file '" + path + "' " + what);
}

GzFile open_gz(const std::string& path) {
  errno = 0;
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) {
    const int err = errno;
    throw DatasetError("Cannot open IDX file '" + path + "': " +
                       (err != 0 ? std::strerror(err) : "out of memory") +
                       ". Install dataset-fashion-mnist (ci/install-deps.sh does) or point "
                       "--data at the directory that holds the files.");
  }
  gzbuffer(file.get(), 1 << 20);
  return file;
}

/// Reads up to `size` bytes; returns how many were read. Throws on a corrupt stream, but not
/// on a short read: the caller knows what "short" means for it.
std::size_t read_some(gzFile_s* file, const std::string& path, void* out, std::size_t size) {
  std::size_t total = 0;
  auto* bytes = static_cast<unsigned char*>(out);
  while (total < size) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(size - total, 1u << 30));
    const int got = gzread(file, bytes + total, chunk);
    if (got < 0) {
      int errnum = 0;
      const char* message = gzerror(file, &errnum);
      fail(path, std::string("is not a readable gzip stream (") + message +
                     "); the file is corrupt, download or reinstall it.");
    }
    if (got == 0) break;
    total += static_cast<std::size_t>(got);
  }
  return total;
}

/// A short read is either a truncated gzip stream (zlib says so) or a file whose payload is
/// shorter than its header promises.
[[noreturn]] void fail_short(gzFile_s* file, const std::string& path, const std::string& part,
                             std::size_t expected, std::size_t got) {
  int errnum = Z_OK;
  gzerror(file, &errnum);
  std::ostringstream what;
  if (errnum == Z_BUF_ERROR) {
    what << "is truncated: its gzip stream ends early, inside the " << part << " (" << got
         << " of " << expected << " bytes); the file is incomplete, download or reinstall it.";
  } else {
    what << "is truncated: its header promises " << expected << " bytes of " << part
         << " but the file holds only " << got << "; the file is incomplete or not an IDX file.";
  }
  fail(path, what.str());
}

IdxHeader parse_header(gzFile_s* file, const std::string& path) {
  unsigned char magic[4];
  const std::size_t got = read_some(file, path, magic, sizeof magic);
  if (got == 0) fail(path, "is empty; expected an IDX header.");
  if (got < sizeof magic) fail_short(file, path, "header", sizeof magic, got);
  const std::uint32_t value = (std::uint32_t{magic[0]} << 24) | (std::uint32_t{magic[1]} << 16) |
                              (std::uint32_t{magic[2]} << 8) | std::uint32_t{magic[3]};
  if (magic[0] != 0 || magic[1] != 0 || magic[3] == 0 || magic[3] > 4) {
    std::ostringstream what;
    what << "has magic number 0x" << std::hex << value
         << ", which is not an IDX magic (expected 0x00000801 for labels or 0x00000803 for "
            "images); it is not an IDX file.";
    fail(path, what.str());
  }
  if (magic[2] != kUnsignedByte) {
    std::ostringstream what;
    what << "holds elements of type 0x" << std::hex << int{magic[2]}
         << "; dlreset reads unsigned-byte (0x08) IDX files such as (Fashion-)MNIST.";
    fail(path, what.str());
  }
  IdxHeader header;
  header.type_code = magic[2];
  const std::size_t ndims = magic[3];
  unsigned char raw_dims[16];
  const std::size_t dims_got = read_some(file, path, raw_dims, 4 * ndims);
  if (dims_got < 4 * ndims) fail_short(file, path, "header", 4 + 4 * ndims, 4 + dims_got);
  for (std::size_t d = 0; d < ndims; ++d) {
    const unsigned char* b = raw_dims + 4 * d;
    const std::int64_t dim = (std::int64_t{b[0]} << 24) | (std::int64_t{b[1]} << 16) |
                             (std::int64_t{b[2]} << 8) | std::int64_t{b[3]};
    header.dims.push_back(dim);
  }
  if (header.element_count() > kMaxElements) {
    fail(path, "declares " + std::to_string(header.element_count()) +
                   " elements, more than any real IDX file holds; its header is corrupt.");
  }
  return header;
}

}  // namespace

std::int64_t IdxHeader::element_count() const {
  std::int64_t count = 1;
  for (const std::int64_t dim : dims) {
    if (dim != 0 && count > kMaxElements / dim) return kMaxElements + 1;
    count *= dim;
  }
  return count;
}

IdxHeader read_idx_header(const std::string& path) {
  GzFile file = open_gz(path);
  return parse_header(file.get(), path);
}

std::vector<std::uint8_t> read_idx_payload(const std::string& path, IdxHeader* header_out) {
  GzFile file = open_gz(path);
  IdxHeader header = parse_header(file.get(), path);
  const auto expected = static_cast<std::size_t>(header.element_count());
  std::vector<std::uint8_t> payload(expected);
  const std::size_t got = read_some(file.get(), path, payload.data(), expected);
  if (got < expected) fail_short(file.get(), path, "data", expected, got);
  unsigned char extra = 0;
  if (read_some(file.get(), path, &extra, 1) != 0) {
    fail(path, "holds more data than its header declares (" + std::to_string(expected) +
                   " bytes); it is not a well-formed IDX file.");
  }
  if (header_out != nullptr) *header_out = std::move(header);
  return payload;
}

void write_idx_file(const std::string& path, const std::vector<std::int64_t>& dims,
                    const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> bytes = {0, 0, kUnsignedByte, static_cast<std::uint8_t>(dims.size())};
  for (const std::int64_t dim : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      bytes.push_back(static_cast<std::uint8_t>((dim >> shift) & 0xff));
    }
  }
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  const bool compress = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  GzFile file(gzopen(path.c_str(), compress ? "wb" : "wbT"));
  if (!file) throw DatasetError("Cannot create IDX file '" + path + "'.");
  if (!bytes.empty() &&
      gzwrite(file.get(), bytes.data(), static_cast<unsigned>(bytes.size())) <= 0) {
    throw DatasetError("Cannot write IDX file '" + path + "'.");
  }
}

}  // namespace dlreset::data
