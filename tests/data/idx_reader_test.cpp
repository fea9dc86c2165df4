#include "harness/data/core/datasets/idx_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "harness/data/core/datasets/idx_dataset.h"
#include "harness/data/core/errors.h"
#include "tests/support/fixtures.h"
#include "tests/support/process_census.h"

namespace dlreset::data {
namespace {

using ::dlreset::testing::TempDir;
using ::testing::HasSubstr;

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "";
}

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(IdxReader, ReadsWhatWasWrittenPlainAndGzipped) {
  TempDir dir;
  const std::vector<std::uint8_t> payload = {1, 2, 3, 4, 5, 6};
  for (const std::string name : {"plain.idx", "packed.idx.gz"}) {
    write_idx_file(dir.file(name), {3, 2}, payload);
    IdxHeader header;
    EXPECT_EQ(read_idx_payload(dir.file(name), &header), payload) << name;
    EXPECT_EQ(header.dims, (std::vector<std::int64_t>{3, 2})) << name;
    EXPECT_EQ(read_idx_header(dir.file(name)).element_count(), 6) << name;
  }
}

TEST(IdxReader, BadMagicNamesTheFile) {
  TempDir dir;
  write_bytes(dir.file("bad.idx"), {0x12, 0x34, 0x08, 0x01, 0, 0, 0, 1, 9});
  const std::string message = error_of([&] { read_idx_header(dir.file("bad.idx")); });
  EXPECT_THAT(message, HasSubstr(dir.file("bad.idx")));
  EXPECT_THAT(message, HasSubstr("magic number 0x12340801"));
}

TEST(IdxReader, EmptyFileNamesTheFile) {
  TempDir dir;
  write_bytes(dir.file("empty.idx"), {});
  const std::string message = error_of([&] { read_idx_header(dir.file("empty.idx")); });
  EXPECT_THAT(message, HasSubstr(dir.file("empty.idx")));
  EXPECT_THAT(message, HasSubstr("is empty"));
}

TEST(IdxReader, TruncatedPayloadNamesTheFile) {
  TempDir dir;
  write_idx_file(dir.file("short.idx"), {10}, std::vector<std::uint8_t>(10, 7));
  std::vector<std::uint8_t> bytes = read_bytes(dir.file("short.idx"));
  bytes.resize(bytes.size() - 4);
  write_bytes(dir.file("short.idx"), bytes);
  EXPECT_NO_THROW(read_idx_header(dir.file("short.idx")));
  const std::string message = error_of([&] { read_idx_payload(dir.file("short.idx"), nullptr); });
  EXPECT_THAT(message, HasSubstr(dir.file("short.idx")));
  EXPECT_THAT(message, HasSubstr("truncated"));
  EXPECT_THAT(message, HasSubstr("promises 10 bytes"));
}

TEST(IdxReader, TruncatedGzipStreamNamesTheFile) {
  TempDir dir;
  std::vector<std::uint8_t> payload(5000);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 31);
  write_idx_file(dir.file("cut.idx.gz"), {5000}, payload);
  std::vector<std::uint8_t> bytes = read_bytes(dir.file("cut.idx.gz"));
  bytes.resize(bytes.size() / 2);
  write_bytes(dir.file("cut.idx.gz"), bytes);
  const std::string message = error_of([&] { read_idx_payload(dir.file("cut.idx.gz"), nullptr); });
  EXPECT_THAT(message, HasSubstr(dir.file("cut.idx.gz")));
  EXPECT_THAT(message, HasSubstr("truncated"));
}

TEST(IdxReader, TrailingDataIsAnError) {
  TempDir dir;
  write_idx_file(dir.file("long.idx"), {2}, {1, 2});
  std::vector<std::uint8_t> bytes = read_bytes(dir.file("long.idx"));
  bytes.push_back(3);
  write_bytes(dir.file("long.idx"), bytes);
  EXPECT_THAT(error_of([&] { read_idx_payload(dir.file("long.idx"), nullptr); }),
              HasSubstr("more data than its header declares"));
}

/// `payload` as one gzip member; `file_name`, when given, goes into the member's header.
std::vector<std::uint8_t> gzip_member(const std::vector<std::uint8_t>& payload, const std::string& file_name = "") {
  z_stream stream{};
  deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  gz_header header{};
  std::string name = file_name;
  if (!name.empty()) {
    header.name = reinterpret_cast<Bytef*>(name.data());
    deflateSetHeader(&stream, &header);
  }
  std::vector<std::uint8_t> out(deflateBound(&stream, payload.size()) + name.size() + 64);
  stream.next_in = const_cast<Bytef*>(payload.data());
  stream.avail_in = static_cast<uInt>(payload.size());
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

std::vector<std::uint8_t> idx_bytes(const std::vector<std::int64_t>& dims, const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> bytes = {0, 0, 0x08, static_cast<std::uint8_t>(dims.size())};
  for (const std::int64_t dim : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      bytes.push_back(static_cast<std::uint8_t>((dim >> shift) & 0xff));
    }
  }
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return bytes;
}

TEST(IdxReader, ParsesFromMemoryWhatItReadsFromAFile) {
  TempDir dir;
  const std::vector<std::uint8_t> payload = {9, 8, 7, 6, 5, 4};
  write_idx_file(dir.file("m.idx.gz"), {2, 3}, payload);
  const std::vector<std::uint8_t> bytes = read_bytes(dir.file("m.idx.gz"));
  IdxHeader header;
  EXPECT_EQ(parse_idx(bytes.data(), bytes.size(), "in memory", &header), payload);
  EXPECT_EQ(header.dims, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(parse_idx_header(bytes.data(), bytes.size(), "in memory").dims, header.dims);
  const std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + 2);
  EXPECT_THAT(error_of([&] { parse_idx(cut.data(), cut.size(), "in memory", nullptr); }),
              HasSubstr("IDX file 'in memory'"));
}

TEST(IdxReader, HeaderDeclaringMoreThanTheFileHoldsFailsWithoutAllocatingIt) {
  // 65535 × 65535 × 4 bytes: just under the 16 GiB cap, in a 19-byte file. The reader used to
  // allocate and zero the declared size before reading a byte of it.
  TempDir dir;
  write_bytes(dir.file("claims.idx"), idx_bytes({0xffff, 0xffff, 4}, {1, 2, 3}));
  const std::int64_t rss_before = testing::resident_set_kib();
  const std::string message = error_of([&] { read_idx_payload(dir.file("claims.idx"), nullptr); });
  EXPECT_THAT(message, HasSubstr("promises 17179344900 bytes of data but the file holds only 3"));
  EXPECT_LT(testing::resident_set_kib() - rss_before, 64 * 1024) << "KiB of RSS it took";
}

TEST(IdxReader, ReadsConcatenatedGzipMembersAndIgnoresWhatFollowsTheLast) {
  TempDir dir;
  const std::vector<std::uint8_t> whole = idx_bytes({2, 2}, {1, 2, 3, 4});
  std::vector<std::uint8_t> bytes = gzip_member({whole.begin(), whole.begin() + 7});
  const std::vector<std::uint8_t> second = gzip_member({whole.begin() + 7, whole.end()});
  bytes.insert(bytes.end(), second.begin(), second.end());
  bytes.insert(bytes.end(), {0, 0, 0, 0});  // padding, as gzip(1) and gzread() ignore it
  write_bytes(dir.file("two.idx.gz"), bytes);
  EXPECT_EQ(read_idx_payload(dir.file("two.idx.gz"), nullptr), (std::vector<std::uint8_t>{1, 2, 3, 4}));
}

TEST(IdxReader, HeaderBehindALongGzipFileNameIsStillRead) {
  // The header read looks at the first 64 KiB; a gzip header longer than that must not make a
  // good file look truncated.
  TempDir dir;
  std::vector<std::uint8_t> payload(100, 3);
  write_bytes(dir.file("named.idx.gz"), gzip_member(idx_bytes({100}, payload), std::string(100000, 'n')));
  EXPECT_EQ(read_idx_header(dir.file("named.idx.gz")).dims, (std::vector<std::int64_t>{100}));
  EXPECT_EQ(read_idx_payload(dir.file("named.idx.gz"), nullptr), payload);
}

TEST(IdxReader, GzipStreamCutInsideItsOwnHeaderIsTruncatedNotEmpty) {
  TempDir dir;
  std::vector<std::uint8_t> bytes = gzip_member(idx_bytes({1}, {5}));
  bytes.resize(6);
  write_bytes(dir.file("stub.idx.gz"), bytes);
  const std::string message = error_of([&] { read_idx_header(dir.file("stub.idx.gz")); });
  EXPECT_THAT(message, HasSubstr("its gzip stream ends early"));
}

TEST(IdxReader, DirectoryInsteadOfAFileNamesIt) {
  TempDir dir;
  const std::string message = error_of([&] { read_idx_payload(dir.path(), nullptr); });
  EXPECT_THAT(message, HasSubstr(dir.path()));
  EXPECT_THAT(message, HasSubstr("Is a directory"));
}

TEST(IdxReader, EverySeedOfTheFuzzCorpusParsesOrFailsWithADatasetError) {
  const std::filesystem::path corpus = std::filesystem::path(DLRESET_SOURCE_DIR) / "tests/fuzz/corpus/idx_reader";
  int parsed = 0;
  int rejected = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    const std::vector<std::uint8_t> bytes = read_bytes(entry.path().string());
    try {
      IdxHeader header;
      const std::vector<std::uint8_t> payload =
          parse_idx(bytes.data(), bytes.size(), entry.path().filename().string(), &header);
      EXPECT_EQ(static_cast<std::int64_t>(payload.size()), header.element_count());
      ++parsed;
    } catch (const DatasetError& e) {
      EXPECT_THAT(e.what(), HasSubstr(entry.path().filename().string()));
      ++rejected;
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

TEST(IdxReader, MissingFileSaysHowToGetIt) {
  const std::string message = error_of([] { read_idx_header("/nonexistent/dir/x-idx1-ubyte.gz"); });
  EXPECT_THAT(message, HasSubstr("/nonexistent/dir/x-idx1-ubyte.gz"));
  EXPECT_THAT(message, HasSubstr("dataset-fashion-mnist"));
}

TEST(IdxDataset, CountMismatchNamesBothFiles) {
  TempDir dir;
  testing::write_tiny_idx_set(dir.path(), "a", 5);
  testing::write_tiny_idx_set(dir.path(), "b", 6);
  IdxDatasetOptions options;
  options.images_path = dir.file("a-images-idx3-ubyte.gz");
  options.labels_path = dir.file("b-labels-idx1-ubyte.gz");
  const std::string message = error_of([&] { IdxDataset dataset(options); });
  EXPECT_THAT(message, HasSubstr("holds 5 images"));
  EXPECT_THAT(message, HasSubstr("holds 6 labels"));
  EXPECT_THAT(message, HasSubstr(options.labels_path));
}

TEST(IdxDataset, LoadsLazilyOnceAndNormalizes) {
  TempDir dir;
  testing::write_tiny_idx_set(dir.path(), "tiny", 12, 2, 3);
  IdxDatasetOptions options;
  options.images_path = dir.file("tiny-images-idx3-ubyte.gz");
  options.labels_path = dir.file("tiny-labels-idx1-ubyte.gz");
  options.mean = 0.5f;
  options.std = 0.25f;
  IdxDataset dataset(options);
  EXPECT_EQ(dataset.size(), 12);
  EXPECT_EQ(dataset.sample_shape(), (SampleShape{1, 2, 3}));
  EXPECT_EQ(dataset.loads(), 0);
  std::vector<float> features(6);
  EXPECT_EQ(dataset.get(7, features.data()), 7);
  EXPECT_EQ(dataset.get(11, features.data()), 1);
  EXPECT_EQ(dataset.loads(), 1);
  // pixel (11, 0, 0) = 11
  EXPECT_FLOAT_EQ(features[0], (11.0f / 255.0f - 0.5f) / 0.25f);

  auto copy = dataset.clone();
  EXPECT_EQ(copy->loads(), 0) << "a clone is a new object that loaded nothing itself";
  copy->get(0, features.data());
  EXPECT_EQ(copy->loads(), 0) << "a clone of a loaded dataset shares its data";

  auto rebuilt = make_dataset(dataset.spec());
  EXPECT_EQ(rebuilt->size(), 12);
  rebuilt->get(0, features.data());
  EXPECT_EQ(rebuilt->loads(), 1);
}

TEST(FashionMnist, TestSplitHasTenThousandLabelledImages) {
  auto dataset = make_fashion_mnist(testing::fashion_mnist_dir(), "t10k");
  EXPECT_EQ(dataset->size(), 10000);
  EXPECT_EQ(dataset->sample_shape(), (SampleShape{1, 28, 28}));
  std::vector<float> features(784);
  std::vector<int> per_class(10, 0);
  for (std::int64_t i = 0; i < dataset->size(); i += 7) {
    const std::int64_t label = dataset->get(i, features.data());
    ASSERT_GE(label, 0);
    ASSERT_LT(label, 10);
    ++per_class[static_cast<std::size_t>(label)];
  }
  for (int count : per_class) EXPECT_GT(count, 0);
  EXPECT_EQ(dataset->loads(), 1);
}

TEST(FashionMnist, UnknownSplitIsAnError) {
  EXPECT_THAT(error_of([] { make_fashion_mnist(testing::fashion_mnist_dir(), "validation"); }),
              HasSubstr("'train' and 't10k'"));
}

}  // namespace
}  // namespace dlreset::data
