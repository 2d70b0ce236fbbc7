// Axis-aligned boxes, IoU and one-to-one matching, for text-box recall and precision.
#pragma once

#include <cstdint>
#include <vector>

namespace openbpu::accuracy {

struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // x0 <= x1, y0 <= y1
  double score = 1;                       // mean probability (detections); 1 for ground truth
  double area() const { return (x1 - x0) * (y1 - y0); }
};

double intersection_over_union(const Box& a, const Box& b);

// Matched pairs and totals, summed over images (micro average).
struct MatchCount {
  int64_t matched = 0;
  int64_t reference = 0;     // boxes to be found
  int64_t predicted = 0;     // boxes found
  double recall() const;     // matched / reference, 1 when there is nothing to find
  double precision() const;  // matched / predicted, 1 when nothing was predicted
  MatchCount& operator+=(const MatchCount& other);
};

// Greedy one-to-one matching: pairs in decreasing IoU order, a pair is taken when both boxes
// are still free and its IoU is at least `min_iou`.
MatchCount match_boxes(const std::vector<Box>& reference, const std::vector<Box>& predicted,
                       double min_iou = 0.5);

}  // namespace openbpu::accuracy
