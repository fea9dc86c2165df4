#include "harness/data/core/datasets/idx_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <utility>

#include "harness/data/core/errors.h"
#include "harness/sys/unique_fd.h"

namespace dlreset::data {

namespace {

constexpr std::uint8_t kUnsignedByte = 0x08;
constexpr std::int64_t kMaxElements = std::int64_t{1} << 34;  // 16 GiB: far beyond any MNIST
/// The longest header an IDX file may have: magic and four dimensions.
constexpr std::size_t kMaxHeaderBytes = 4 + 4 * 4;
/// How much of a file read_idx_header reads first. A gzip member's own header is 10 bytes
/// plus optional fields (file name, comment), and the first deflate block yields the IDX
/// header from a few dozen bytes, so 64 KiB is plenty for any real file; a longer gzip header
/// makes the reader fall back to the whole file rather than fail.
constexpr std::size_t kHeaderPrefixBytes = std::size_t{1} << 16;
/// zlib counts in 32-bit units; inputs and outputs are fed in pieces no larger than this.
constexpr std::size_t kZlibChunk = std::size_t{1} << 30;
/// zlib's documented bound on deflate's compression ratio.
constexpr std::size_t kMaxDeflateRatio = 1032;
/// The payload is decoded in pieces of this size, so memory follows the data that is really
/// there rather than the size a (possibly corrupt) header claims.
constexpr std::size_t kPayloadChunk = std::size_t{16} << 20;

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw DatasetError("IDX file '" + name + "' " + what);
}

/// Decodes a whole file held in memory, as gzread() would: gzip when it starts with the gzip
/// magic (one member or several, concatenated; bytes after the last member are ignored, as
/// gzip and gzread do), the bytes as they are otherwise.
class IdxDecoder {
 public:
  IdxDecoder(const std::uint8_t* data, std::size_t size, const std::string& name)
      : data_(data), size_(size), name_(name) {
    gzip_ = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    if (gzip_) {
      // 16 + MAX_WBITS: a gzip wrapper, checked (header, CRC-32 and length of every member).
      if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
        fail(name_, "cannot be decompressed: zlib could not start (out of memory).");
      }
      inflating_ = true;
    }
  }
  ~IdxDecoder() {
    if (inflating_) inflateEnd(&stream_);
  }
  IdxDecoder(const IdxDecoder&) = delete;
  IdxDecoder& operator=(const IdxDecoder&) = delete;

  /// Decodes up to `size` bytes into `out`; returns how many. Throws on a corrupt gzip stream
  /// but not on a short read: the caller knows what "short" means for it.
  std::size_t read(void* out, std::size_t size) {
    auto* bytes = static_cast<std::uint8_t*>(out);
    if (!gzip_) {
      const std::size_t n = std::min(size, size_ - offset_);
      if (n > 0) std::memcpy(bytes, data_ + offset_, n);
      offset_ += n;
      return n;
    }
    std::size_t total = 0;
    while (total < size && !done_) {
      if (stream_.avail_in == 0 && offset_ < size_) {
        const std::size_t n = std::min(kZlibChunk, size_ - offset_);
        stream_.next_in = const_cast<Bytef*>(data_ + offset_);
        stream_.avail_in = static_cast<uInt>(n);
        offset_ += n;
      }
      const std::size_t want = std::min(kZlibChunk, size - total);
      stream_.next_out = bytes + total;
      stream_.avail_out = static_cast<uInt>(want);
      const int status = inflate(&stream_, Z_NO_FLUSH);
      total += want - stream_.avail_out;
      if (status == Z_STREAM_END) {
        if (remaining_input() >= 2 && next_input()[0] == 0x1f && next_input()[1] == 0x8b) {
          inflateReset(&stream_);  // another member follows
        } else {
          done_ = true;
        }
      } else if (status == Z_BUF_ERROR && remaining_input() == 0) {
        // No progress is possible and no input is left: the stream stops inside a member.
        cut_short_ = true;
        done_ = true;
      } else if (status != Z_OK) {
        fail(name_, std::string("is not a readable gzip stream (") +
                        (stream_.msg != nullptr ? stream_.msg : zError(status)) +
                        "); the file is corrupt, download or reinstall it.");
      }
    }
    return total;
  }

  /// True once the input ended inside a gzip member: the file was cut.
  bool cut_short() const { return cut_short_; }

  /// The most bytes the input can still decode to: deflate expands at most 1032-fold, and a
  /// plain file is what it is.
  std::size_t max_output() const {
    const std::size_t left = remaining_input();
    if (!gzip_) return left;
    return left > SIZE_MAX / kMaxDeflateRatio ? SIZE_MAX : left * kMaxDeflateRatio;
  }

 private:
  std::size_t remaining_input() const { return stream_.avail_in + (size_ - offset_); }
  const std::uint8_t* next_input() const { return stream_.avail_in > 0 ? stream_.next_in : data_ + offset_; }

  const std::uint8_t* data_;
  std::size_t size_;
  const std::string& name_;
  std::size_t offset_ = 0;  ///< Input not yet handed to zlib starts here.
  bool gzip_ = false;
  bool inflating_ = false;
  bool done_ = false;
  bool cut_short_ = false;
  z_stream stream_{};
};

/// A short read is either a truncated gzip stream or a file whose payload is shorter than its
/// header promises.
[[noreturn]] void fail_short(const IdxDecoder& decoder, const std::string& name, const std::string& part,
                             std::size_t expected, std::size_t got) {
  std::ostringstream what;
  if (decoder.cut_short()) {
    what << "is truncated: its gzip stream ends early, inside the " << part << " (" << got << " of " << expected
         << " bytes); the file is incomplete, download or reinstall it.";
  } else {
    what << "is truncated: its header promises " << expected << " bytes of " << part << " but the file holds only "
         << got << "; the file is incomplete or not an IDX file.";
  }
  fail(name, what.str());
}

IdxHeader parse_header(IdxDecoder& decoder, const std::string& name) {
  unsigned char magic[4];
  const std::size_t got = decoder.read(magic, sizeof magic);
  if (got == 0 && !decoder.cut_short()) fail(name, "is empty; expected an IDX header.");
  if (got < sizeof magic) fail_short(decoder, name, "header", sizeof magic, got);
  const std::uint32_t value = (std::uint32_t{magic[0]} << 24) | (std::uint32_t{magic[1]} << 16) |
                              (std::uint32_t{magic[2]} << 8) | std::uint32_t{magic[3]};
  if (magic[0] != 0 || magic[1] != 0 || magic[3] == 0 || magic[3] > 4) {
    std::ostringstream what;
    what << "has magic number 0x" << std::hex << value
         << ", which is not an IDX magic (expected 0x00000801 for labels or 0x00000803 for "
            "images); it is not an IDX file.";
    fail(name, what.str());
  }
  if (magic[2] != kUnsignedByte) {
    std::ostringstream what;
    what << "holds elements of type 0x" << std::hex << int{magic[2]}
         << "; dlreset reads unsigned-byte (0x08) IDX files such as (Fashion-)MNIST.";
    fail(name, what.str());
  }
  IdxHeader header;
  header.type_code = magic[2];
  const std::size_t ndims = magic[3];
  unsigned char raw_dims[16] = {};
  const std::size_t dims_got = decoder.read(raw_dims, 4 * ndims);
  if (dims_got < 4 * ndims) fail_short(decoder, name, "header", 4 + 4 * ndims, 4 + dims_got);
  for (std::size_t d = 0; d < ndims; ++d) {
    const unsigned char* b = raw_dims + 4 * d;
    const std::int64_t dim =
        (std::int64_t{b[0]} << 24) | (std::int64_t{b[1]} << 16) | (std::int64_t{b[2]} << 8) | std::int64_t{b[3]};
    header.dims.push_back(dim);
  }
  if (header.element_count() > kMaxElements) {
    fail(name, "declares " + std::to_string(header.element_count()) +
                   " elements, more than any real IDX file holds; its header is corrupt.");
  }
  return header;
}

/// Reads the file, or its first `limit` bytes.
std::vector<std::uint8_t> read_file(const std::string& path, std::size_t limit) {
  const sys::UniqueFd owned(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  const int fd = owned.get();
  if (fd < 0) {
    const int err = errno;
    throw DatasetError("Cannot open IDX file '" + path + "': " + std::strerror(err) +
                       ". Install dataset-fashion-mnist (ci/install-deps.sh does) or point "
                       "--data at the directory that holds the files.");
  }
  struct stat info {};
  std::vector<std::uint8_t> bytes;
  if (::fstat(fd, &info) == 0 && info.st_size > 0) {
    bytes.reserve(std::min(limit, static_cast<std::size_t>(info.st_size)));
  }
  constexpr std::size_t kReadChunk = std::size_t{1} << 20;
  while (bytes.size() < limit) {
    const std::size_t at = bytes.size();
    const std::size_t want = std::min(kReadChunk, limit - at);
    bytes.resize(at + want);
    const ssize_t n = ::read(fd, bytes.data() + at, want);
    if (n < 0 && errno == EINTR) {
      bytes.resize(at);
      continue;
    }
    if (n < 0) {
      const int err = errno;
      throw DatasetError("Cannot read IDX file '" + path + "': " + std::strerror(err) +
                         "; point --data at the directory that holds the IDX files.");
    }
    bytes.resize(at + static_cast<std::size_t>(n));
    if (n == 0) break;
  }
  return bytes;
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

IdxHeader parse_idx_header(const std::uint8_t* data, std::size_t size, const std::string& name) {
  IdxDecoder decoder(data, size, name);
  return parse_header(decoder, name);
}

std::vector<std::uint8_t> parse_idx(const std::uint8_t* data, std::size_t size, const std::string& name,
                                    IdxHeader* header_out) {
  IdxDecoder decoder(data, size, name);
  IdxHeader header = parse_header(decoder, name);
  const auto expected = static_cast<std::size_t>(header.element_count());
  // A 20-byte file may declare 16 GiB: allocating (and zeroing) what the header claims before
  // reading would exhaust memory instead of reporting a truncated file. Reserve what the input
  // can hold at most, and grow only with what really decodes.
  std::vector<std::uint8_t> payload;
  payload.reserve(std::min(expected, decoder.max_output()));
  while (payload.size() < expected) {
    const std::size_t at = payload.size();
    const std::size_t want = std::min({kPayloadChunk, expected - at, std::max<std::size_t>(1, decoder.max_output())});
    payload.resize(at + want);
    const std::size_t got = decoder.read(payload.data() + at, want);
    payload.resize(at + got);
    if (got < want) break;
  }
  if (payload.size() < expected) fail_short(decoder, name, "data", expected, payload.size());
  unsigned char extra = 0;
  if (decoder.read(&extra, 1) != 0) {
    fail(name, "holds more data than its header declares (" + std::to_string(expected) +
                   " bytes); it is not a well-formed IDX file.");
  }
  if (header_out != nullptr) *header_out = std::move(header);
  return payload;
}

IdxHeader read_idx_header(const std::string& path) {
  std::vector<std::uint8_t> bytes = read_file(path, kHeaderPrefixBytes);
  if (bytes.size() == kHeaderPrefixBytes) {
    // The file may go on: make sure the prefix decodes to a whole header, or read it all.
    IdxDecoder probe(bytes.data(), bytes.size(), path);
    unsigned char header[kMaxHeaderBytes];
    if (probe.read(header, sizeof header) < sizeof header && probe.cut_short()) {
      bytes = read_file(path, static_cast<std::size_t>(-1));
    }
  }
  return parse_idx_header(bytes.data(), bytes.size(), path);
}

std::vector<std::uint8_t> read_idx_payload(const std::string& path, IdxHeader* header) {
  // Mapping the file instead of copying it into a buffer keeps a worker's load as fast as a
  // streaming gzread() (copying 26 MB of Fashion-MNIST first cost ~10% more).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info {};
  if (fd >= 0 && ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    const auto size = static_cast<std::size_t>(info.st_size);
    void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (mapped != MAP_FAILED) {
      /// Unmaps the file however parse_idx leaves, by return or by throw.
      class Unmapper {
       public:
        Unmapper(void* address, std::size_t size) : address_(address), size_(size) {}
        ~Unmapper() { ::munmap(address_, size_); }
        Unmapper(const Unmapper&) = delete;
        Unmapper& operator=(const Unmapper&) = delete;

       private:
        void* address_;
        std::size_t size_;
      } unmapper(mapped, size);
      ::madvise(mapped, size, MADV_SEQUENTIAL);
      return parse_idx(static_cast<const std::uint8_t*>(mapped), size, path, header);
    }
  } else if (fd >= 0) {
    ::close(fd);
  }
  // Empty, special or unmappable files, and every error message: the plain read.
  const std::vector<std::uint8_t> bytes = read_file(path, static_cast<std::size_t>(-1));
  return parse_idx(bytes.data(), bytes.size(), path, header);
}

void write_idx_file(const std::string& path, const std::vector<std::int64_t>& dims,
                    const std::vector<std::uint8_t>& payload) {
  struct GzCloser {
    void operator()(gzFile_s* file) const { gzclose(file); }
  };
  std::vector<std::uint8_t> bytes = {0, 0, kUnsignedByte, static_cast<std::uint8_t>(dims.size())};
  for (const std::int64_t dim : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      bytes.push_back(static_cast<std::uint8_t>((dim >> shift) & 0xff));
    }
  }
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  const bool compress = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), compress ? "wb" : "wbT"));
  if (!file) throw DatasetError("Cannot create IDX file '" + path + "'.");
  if (!bytes.empty() && gzwrite(file.get(), bytes.data(), static_cast<unsigned>(bytes.size())) <= 0) {
    throw DatasetError("Cannot write IDX file '" + path + "'.");
  }
}

}  // namespace dlreset::data
