// A sample's shape keeps every dim, in the object while it is short and on the heap beyond.
#include "harness/data/core/datasets/sample_shape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "harness/data/core/datasets/dataset.h"

namespace dlreset::data {
namespace {

TEST(SampleShape, AnImagesShapeReadsBackAndComparesAsASequence) {
  const SampleShape shape = {1, 28, 28};
  ASSERT_EQ(shape.size(), 3u);
  EXPECT_EQ(shape[0], 1);
  EXPECT_EQ(shape[2], 28);
  EXPECT_EQ(shape.to_vector(), (std::vector<std::int64_t>{1, 28, 28}));
  EXPECT_EQ(shape, (SampleShape{1, 28, 28}));
  EXPECT_NE(shape, (SampleShape{1, 28}));
  EXPECT_NE(shape, (SampleShape{1, 28, 27}));
  EXPECT_EQ(shape_numel(shape), 784);
}

TEST(SampleShape, AShapeLongerThanItsInlineSizesKeepsEveryDimThroughCopies) {
  const std::vector<std::int64_t> sizes = {2, 1, 3, 1, 1, 2, 5, 1};
  ASSERT_GT(sizes.size(), SampleShape::kInlineDims);
  const SampleShape shape(sizes);
  SampleShape copy = shape;
  EXPECT_EQ(copy.to_vector(), sizes);
  EXPECT_EQ(copy, shape);
  copy = SampleShape{4};
  EXPECT_EQ(copy.size(), 1u);
  EXPECT_EQ(copy[0], 4);
  copy = shape;
  EXPECT_EQ(shape_numel(copy), 60);
}

TEST(SampleShape, AScalarsShapeIsEmptyAndHoldsOneFloat) {
  const SampleShape scalar;
  EXPECT_TRUE(scalar.empty());
  EXPECT_EQ(scalar.begin(), scalar.end());
  EXPECT_EQ(shape_numel(scalar), 1);
}

}  // namespace
}  // namespace dlreset::data
