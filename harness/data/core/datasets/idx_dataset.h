// An images + labels pair of IDX files, such as Fashion-MNIST's, as a lazily loaded dataset.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/data/core/datasets/dataset.h"

namespace dlreset::data {

struct IdxDatasetOptions {
  std::string images_path;  ///< An idx3 file of unsigned bytes: count × rows × cols.
  std::string labels_path;  ///< An idx1 file of unsigned bytes: count.
  /// Pixels become ((p / 255) - mean) / std, the usual torchvision Normalize.
  float mean = 0.0f;
  float std = 1.0f;
};

/// Construction reads only the two headers (so a missing or corrupt file fails at once, in the
/// main process, naming the file); the first `get` gunzips both files, parses them and turns
/// every pixel into a normalized float. For Fashion-MNIST's train split that is ~0.3 s of real
/// work, paid again by every new worker.
class IdxDataset : public Dataset {
 public:
  explicit IdxDataset(IdxDatasetOptions options);

  std::int64_t size() const override { return size_; }
  SampleShape sample_shape() const override { return {1, rows_, cols_}; }
  std::int64_t get(std::int64_t index, float* features) override;
  std::unique_ptr<Dataset> clone() const override;
  std::string spec() const override;

  /// Rebuilds from the JSON `text` that `spec()` writes (kind "idx").
  static std::unique_ptr<IdxDataset> from_spec(const std::string& text);

  /// Loads now if not loaded yet (what the first `get` does).
  void load();
  bool loaded() const { return data_ != nullptr; }
  const IdxDatasetOptions& options() const { return options_; }

 private:
  struct Data {
    std::vector<float> images;  ///< size × rows × cols, normalized.
    std::vector<std::uint8_t> labels;
  };

  IdxDatasetOptions options_;
  std::int64_t size_ = 0;
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  /// Shared, never mutated after the load: clones of a loaded dataset share it for free.
  std::shared_ptr<const Data> data_;
};

/// The normalization constants of Fashion-MNIST's training images.
inline constexpr float kFashionMnistMean = 0.2860f;
inline constexpr float kFashionMnistStd = 0.3530f;

/// Fashion-MNIST's `split` ("train": 60000 images, or "t10k": 10000) from `root`, which holds
/// `<split>-images-idx3-ubyte[.gz]` and `<split>-labels-idx1-ubyte[.gz]`.
std::unique_ptr<IdxDataset> make_fashion_mnist(const std::string& root, const std::string& split);

}  // namespace dlreset::data
