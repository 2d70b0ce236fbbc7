// Text boxes from a DB (differentiable binarization) probability map, after PaddleOCR's
// DBPostProcess (box_type "quad", score_mode "fast"):
//   1. binarise at `threshold`; 8-connected components (PaddleOCR: outer contours);
//   2. the minimum-area rectangle of each component's pixel centres (rotating calipers over the
//      convex hull, as cv2.minAreaRect); drop it if its short side is under `min_size`;
//   3. score = mean probability of the pixels inside the rectangle; drop it under
//      `box_threshold`;
//   4. unclip: grow the rectangle by d = area * unclip_ratio / perimeter on every side (what
//      Clipper's offset and a second minAreaRect give); drop it if its short side is then under
//      `min_size` + 2.
// Each box is reported as the axis-aligned bounding box of that rectangle, clipped to the map
// (ground truth boxes are axis-aligned too; rendered text is at most slightly rotated).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "openbpu/accuracy/box_matching.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::accuracy {

struct DbOptions {
  float threshold = 0.3f;      // binarisation of the probability map
  float box_threshold = 0.6f;  // minimum mean probability inside a box
  double unclip_ratio = 1.5;
  double min_size = 3;  // minimum short side before unclip (min_size + 2 after)
  int64_t max_candidates = 1000;
};

// `probability` is a row-major height x width map.
std::vector<Box> db_boxes(std::span<const float> probability, int64_t height, int64_t width,
                          const DbOptions& options = {});
// The map of a det model output [1, 1, H, W] (any leading dimensions of size 1). Throws Error
// naming the shape for anything else.
std::vector<Box> db_boxes(const kernels::Tensor& probability, const DbOptions& options = {});

}  // namespace openbpu::accuracy
