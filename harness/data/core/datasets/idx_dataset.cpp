#include "harness/data/core/datasets/idx_dataset.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <sys/stat.h>
#include <utility>

#include "harness/data/core/datasets/dataset_registry.h"
#include "harness/data/core/datasets/idx_reader.h"
#include "harness/data/core/datasets/options_spec.h"
#include "harness/data/core/errors.h"

namespace dlreset::data {

namespace {

void check_headers(const IdxHeader& images, const IdxHeader& labels, const IdxDatasetOptions& options) {
  if (images.dims.size() != 3) {
    throw DatasetError("IDX file '" + options.images_path + "' has " + std::to_string(images.dims.size()) +
                       " dimensions; an images file has 3 (count, rows, cols).");
  }
  if (labels.dims.size() != 1) {
    throw DatasetError("IDX file '" + options.labels_path + "' has " + std::to_string(labels.dims.size()) +
                       " dimensions; a labels file has 1 (count).");
  }
  if (images.dims[0] != labels.dims[0]) {
    throw DatasetError("IDX file '" + options.images_path + "' holds " + std::to_string(images.dims[0]) +
                       " images but '" + options.labels_path + "' holds " + std::to_string(labels.dims[0]) +
                       " labels; the two files must come from the same split.");
  }
}

bool exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

/// Debian ships the files gzip'ed; an unpacked copy works too.
std::string find_file(const std::string& root, const std::string& name) {
  std::string base = root + "/" + name;
  if (exists(base + ".gz") || !exists(base)) return base + ".gz";
  return base;
}

}  // namespace

// The spec is the options as JSON, field by field: a field added to the options reaches a
// spawned worker without more code.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(IdxDatasetOptions, images_path, labels_path, mean, std)

IdxDataset::IdxDataset(IdxDatasetOptions options) : options_(std::move(options)) {
  if (!(options_.std > 0.0f)) {
    throw DatasetError("IdxDataset's std must be positive, got " + std::to_string(options_.std) +
                       "; pass the standard deviation of the pixels in [0, 1].");
  }
  const IdxHeader images = read_idx_header(options_.images_path);
  const IdxHeader labels = read_idx_header(options_.labels_path);
  check_headers(images, labels, options_);
  size_ = images.dims[0];
  rows_ = images.dims[1];
  cols_ = images.dims[2];
}

void IdxDataset::load() {
  if (data_) return;
  const auto start = std::chrono::steady_clock::now();
  IdxHeader images_header;
  IdxHeader labels_header;
  const std::vector<std::uint8_t> pixels = read_idx_payload(options_.images_path, &images_header);
  std::vector<std::uint8_t> labels = read_idx_payload(options_.labels_path, &labels_header);
  check_headers(images_header, labels_header, options_);
  if (images_header.dims[0] != size_ || images_header.dims[1] != rows_ || images_header.dims[2] != cols_) {
    throw DatasetError("IDX file '" + options_.images_path +
                       "' changed since the dataset was created; recreate the DataLoader.");
  }
  auto data = std::make_shared<Data>();
  data->images.resize(pixels.size());
  // torchvision's ToTensor then Normalize, in float32 and in their order, so that a pixel
  // rounds as it does there: one value per pixel level, looked up.
  float level[256];
  for (int p = 0; p < 256; ++p) level[p] = (static_cast<float>(p) / 255.0f - options_.mean) / options_.std;
  for (std::size_t i = 0; i < pixels.size(); ++i) data->images[i] = level[pixels[i]];
  data->labels = std::move(labels);
  data_ = std::move(data);
  record_load(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

std::int64_t IdxDataset::get(std::int64_t index, float* features) {
  if (index < 0 || index >= size_) {
    throw std::out_of_range("index " + std::to_string(index) + " is out of range for a dataset of " +
                            std::to_string(size_) + " samples");
  }
  load();
  const std::int64_t numel = rows_ * cols_;
  std::memcpy(features, data_->images.data() + index * numel, static_cast<std::size_t>(numel) * sizeof(float));
  return data_->labels[static_cast<std::size_t>(index)];
}

std::unique_ptr<Dataset> IdxDataset::clone() const {
  auto copy = std::make_unique<IdxDataset>(*this);
  copy->reset_load_count();
  return copy;
}

std::string IdxDataset::spec() const { return detail::options_spec("idx", options_); }

std::unique_ptr<IdxDataset> IdxDataset::from_spec(const std::string& text) {
  return std::make_unique<IdxDataset>(detail::options_from_spec<IdxDatasetOptions>(text));
}

DLRESET_REGISTER_DATASET("idx", IdxDataset)

std::unique_ptr<IdxDataset> make_fashion_mnist(const std::string& root, const std::string& split) {
  if (split != "train" && split != "t10k") {
    throw DatasetError("Fashion-MNIST has the splits 'train' and 't10k', not '" + split + "'.");
  }
  IdxDatasetOptions options;
  options.images_path = find_file(root, split + "-images-idx3-ubyte");
  options.labels_path = find_file(root, split + "-labels-idx1-ubyte");
  options.mean = kFashionMnistMean;
  options.std = kFashionMnistStd;
  return std::make_unique<IdxDataset>(std::move(options));
}

}  // namespace dlreset::data
