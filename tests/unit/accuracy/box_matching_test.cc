#include "openbpu/accuracy/box_matching.h"

#include <gtest/gtest.h>

namespace openbpu::accuracy {
namespace {

Box box(double x0, double y0, double x1, double y1) {
  return {x0, y0, x1, y1, 1};
}

TEST(BoxMatching, IntersectionOverUnion) {
  EXPECT_DOUBLE_EQ(intersection_over_union(box(0, 0, 10, 10), box(0, 0, 10, 10)), 1.0);
  EXPECT_DOUBLE_EQ(intersection_over_union(box(0, 0, 10, 10), box(5, 0, 15, 10)), 50.0 / 150.0);
  EXPECT_DOUBLE_EQ(intersection_over_union(box(0, 0, 10, 10), box(10, 0, 20, 10)), 0.0);
  EXPECT_DOUBLE_EQ(intersection_over_union(box(0, 0, 0, 0), box(0, 0, 0, 0)), 0.0);
}

TEST(BoxMatching, OneToOneGreedyByIou) {
  // Two predictions overlap the first truth box; only the better one matches it.
  const std::vector<Box> truth = {box(0, 0, 100, 20), box(0, 40, 100, 60)};
  const std::vector<Box> predicted = {box(2, 0, 100, 20), box(0, 1, 98, 21), box(0, 41, 99, 60)};
  const MatchCount m = match_boxes(truth, predicted);
  EXPECT_EQ(m.matched, 2);
  EXPECT_EQ(m.reference, 2);
  EXPECT_EQ(m.predicted, 3);
  EXPECT_DOUBLE_EQ(m.recall(), 1.0);
  EXPECT_DOUBLE_EQ(m.precision(), 2.0 / 3.0);
}

TEST(BoxMatching, GreedyPrefersTheHighestIouPair) {
  // IoU: p0-t0 0.74, p0-t1 0.90, p1-t1 0.54, p1-t0 0.33. Highest first takes p0-t1; then
  // t0 is left with p1 only, below the bar (an optimal assignment would match both).
  const std::vector<Box> truth = {box(0, 0, 10, 10), box(2, 0, 12, 10)};
  const std::vector<Box> predicted = {box(1.5, 0, 11.5, 10), box(5, 0, 15, 10)};
  const MatchCount m = match_boxes(truth, predicted);
  EXPECT_EQ(m.matched, 1);
}

TEST(BoxMatching, RespectsTheIouBar) {
  const std::vector<Box> truth = {box(0, 0, 10, 10)};
  const std::vector<Box> predicted = {box(4, 0, 14, 10)};  // IoU 6/14 = 0.43
  EXPECT_EQ(match_boxes(truth, predicted, 0.5).matched, 0);
  EXPECT_EQ(match_boxes(truth, predicted, 0.4).matched, 1);
}

TEST(BoxMatching, EmptySetsAndSums) {
  MatchCount total;
  EXPECT_DOUBLE_EQ(total.recall(), 1.0);
  EXPECT_DOUBLE_EQ(total.precision(), 1.0);
  total += match_boxes({box(0, 0, 1, 1)}, {});
  total += match_boxes({}, {box(0, 0, 1, 1)});
  EXPECT_EQ(total.reference, 1);
  EXPECT_EQ(total.predicted, 1);
  EXPECT_DOUBLE_EQ(total.recall(), 0.0);
  EXPECT_DOUBLE_EQ(total.precision(), 0.0);
}

}  // namespace
}  // namespace openbpu::accuracy
