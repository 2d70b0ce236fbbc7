#include "openbpu/accuracy/db_postprocess.h"

#include <gtest/gtest.h>

#include <cmath>

#include "openbpu/common/error.h"

namespace openbpu::accuracy {
namespace {

struct Map {
  int64_t height, width;
  std::vector<float> values;
  Map(int64_t h, int64_t w, float background) : height(h), width(w), values(h * w, background) {}
  // Fills columns [x0, x1] and rows [y0, y1] (inclusive).
  void fill(int64_t x0, int64_t y0, int64_t x1, int64_t y1, float p) {
    for (int64_t y = y0; y <= y1; ++y)
      for (int64_t x = x0; x <= x1; ++x) values[static_cast<size_t>(y * width + x)] = p;
  }
};

double unclip_distance(double w, double h) {
  return w * h * 1.5 / (2 * (w + h));
}

TEST(DbPostprocess, BoxPerComponentGrownByTheUnclipDistance) {
  Map m(60, 100, 0.1f);
  m.fill(10, 20, 49, 29, 0.9f);
  m.fill(60, 40, 89, 47, 0.8f);
  const auto boxes = db_boxes(m.values, m.height, m.width);
  ASSERT_EQ(boxes.size(), 2u);
  const double d = unclip_distance(39, 9);
  EXPECT_NEAR(boxes[0].x0, 10 - d, 1e-9);
  EXPECT_NEAR(boxes[0].y0, 20 - d, 1e-9);
  EXPECT_NEAR(boxes[0].x1, 49 + d, 1e-9);
  EXPECT_NEAR(boxes[0].y1, 29 + d, 1e-9);
  EXPECT_NEAR(boxes[0].score, 0.9, 1e-6);
  EXPECT_NEAR(boxes[1].x0, 60 - unclip_distance(29, 7), 1e-9);
  EXPECT_NEAR(boxes[1].score, 0.8, 1e-6);
}

TEST(DbPostprocess, DropsLowScoreAndTinyComponents) {
  Map m(40, 80, 0.0f);
  m.fill(5, 5, 40, 15, 0.5f);    // above the 0.3 threshold, mean below 0.6
  m.fill(60, 30, 61, 31, 1.0f);  // 2x2 pixels: short side 1 < 3
  EXPECT_TRUE(db_boxes(m.values, m.height, m.width).empty());
  DbOptions lenient;
  lenient.box_threshold = 0.4f;
  EXPECT_EQ(db_boxes(m.values, m.height, m.width, lenient).size(), 1u);
}

TEST(DbPostprocess, ScoreIsTheMeanOverTheBox) {
  Map m(30, 40, 0.0f);
  m.fill(5, 5, 24, 14, 0.9f);
  m.fill(5, 5, 24, 9, 0.35f);  // half the box at 0.35: mean 0.625
  const auto boxes = db_boxes(m.values, m.height, m.width);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_NEAR(boxes[0].score, 0.625, 1e-6);
}

TEST(DbPostprocess, DiagonalPixelsJoinOneComponent) {
  Map m(30, 30, 0.0f);
  m.fill(2, 2, 10, 10, 1.0f);
  m.fill(11, 11, 20, 20, 1.0f);  // touches the first block at one corner
  DbOptions options;
  options.box_threshold = 0.4f;
  const auto boxes = db_boxes(m.values, m.height, m.width, options);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_LE(boxes[0].x0, 2);
  EXPECT_GE(boxes[0].x1, 20);
}

// A strip of `thickness` pixels along a line through (cx, cy) at `degrees` (y down).
Map rotated_strip(double degrees, double length, double thickness) {
  Map m(80, 140, 0.0f);
  const double t = degrees * 3.14159265358979 / 180, cx = 70, cy = 40;
  for (int64_t y = 0; y < m.height; ++y) {
    for (int64_t x = 0; x < m.width; ++x) {
      const double a = (x - cx) * std::cos(t) + (y - cy) * std::sin(t);
      const double b = -(x - cx) * std::sin(t) + (y - cy) * std::cos(t);
      if (std::fabs(a) <= length / 2 && std::fabs(b) <= thickness / 2) {
        m.values[static_cast<size_t>(y * m.width + x)] = 0.95f;
      }
    }
  }
  return m;
}

TEST(DbPostprocess, RotatedTextUsesTheMinimumAreaRectangle) {
  // Over its axis-aligned box the strip would score about 0.3 and be dropped; over its
  // minimum-area rectangle it scores nearly its own probability.
  const Map m = rotated_strip(10, 100, 6);
  const auto boxes = db_boxes(m.values, m.height, m.width);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_GT(boxes[0].score, 0.75);  // 0.95 on ~6 of the ~7 pixel rows counted
  // Unclip distance from the rectangle (about 100 x 6), not from its bounding box.
  const double d = unclip_distance(99, 5);
  const double half_height = (99 / 2.0 + d) * std::sin(0.1745) + (5 / 2.0 + d) * std::cos(0.1745);
  EXPECT_NEAR(boxes[0].y1 - boxes[0].y0, 2 * half_height, 3.0);
  EXPECT_NEAR((boxes[0].x0 + boxes[0].x1) / 2, 70, 1.0);
}

TEST(DbPostprocess, ClipsToTheMap) {
  Map m(20, 20, 0.0f);
  m.fill(0, 0, 19, 19, 1.0f);
  const auto boxes = db_boxes(m.values, m.height, m.width);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].x0, 0);
  EXPECT_EQ(boxes[0].y0, 0);
  EXPECT_EQ(boxes[0].x1, 20);
  EXPECT_EQ(boxes[0].y1, 20);
}

TEST(DbPostprocess, ReadsADetOutputTensor) {
  Map m(16, 24, 0.0f);
  m.fill(4, 4, 19, 11, 1.0f);
  const auto t = kernels::Tensor::from_values<float>({1, 1, 16, 24}, m.values);
  EXPECT_EQ(db_boxes(t).size(), 1u);
  EXPECT_THROW(db_boxes(t.reshaped({2, 1, 8, 24})), Error);
  EXPECT_THROW(db_boxes(m.values, 16, 25), Error);
}

}  // namespace
}  // namespace openbpu::accuracy
