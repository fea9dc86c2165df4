// Reader for the IDX format of (Fashion-)MNIST, plain or gzip-compressed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dlreset::data {

/// The header of an IDX file: magic 0x0000TTDD, TT the element type, DD the number of dims.
struct IdxHeader {
  std::uint8_t type_code = 0;  ///< 0x08 = unsigned byte, the only type MNIST files use.
  std::vector<std::int64_t> dims;
  std::int64_t element_count() const;
};

/// Reads and checks only the header: cheap (the first 64 KiB of the file at most, unless a
/// gzip header is longer), so the main process learns a dataset's size without loading it.
/// Throws DatasetError naming the file.
IdxHeader read_idx_header(const std::string& path);

/// Reads the whole file and checks that the payload has exactly the size the header promises.
/// Throws DatasetError naming the file on a bad magic, a truncated or corrupt stream, or
/// trailing data.
std::vector<std::uint8_t> read_idx_payload(const std::string& path, IdxHeader* header);

/// What the two functions above do once the file's bytes are in memory; `name` stands for
/// the file in error messages. The file functions are these plus a read of the file, which
/// is what lets the fuzzer (tests/fuzz/) reach every check without touching a disk.
IdxHeader parse_idx_header(const std::uint8_t* data, std::size_t size, const std::string& name);
std::vector<std::uint8_t> parse_idx(const std::uint8_t* data, std::size_t size, const std::string& name,
                                    IdxHeader* header);

/// Writes an uncompressed (or, when `path` ends in ".gz", gzip-compressed) IDX file of unsigned
/// bytes: what tests use to build tiny fixtures.
void write_idx_file(const std::string& path, const std::vector<std::int64_t>& dims,
                    const std::vector<std::uint8_t>& payload);

}  // namespace dlreset::data
