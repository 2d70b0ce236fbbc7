// Text boxes from the probability map of a DB (differentiable binarization) detector, as
// PaddleOCR's DBPostProcess (box_type "quad", score_mode "fast") and TextDetector do:
//   1. binarise the map at `threshold`; each 8-connected component (PaddleOCR: each contour of
//      cv2.findContours) is a candidate, at most `max_candidates` of them in raster order;
//   2. its minimum-area rectangle (rotating calipers over the convex hull of its pixels, as
//      cv2.minAreaRect); dropped if the short side is under `min_size`;
//   3. score: the mean probability of the pixels inside or on the rectangle with its corners
//      truncated to whole pixels (box_score_fast's fillPoly mask); dropped under
//      `box_threshold`;
//   4. unclip: the rectangle grown by d = area * unclip_ratio / perimeter on every side (what
//      pyclipper's round offset followed by a second minAreaRect gives); dropped if its short
//      side is then under min_size + 2;
//   5. corners scaled from the map to the image, rounded (half to even) and clipped; ordered
//      top-left, top-right, bottom-right, bottom-left; clipped to the last pixel; dropped if a
//      side is 3 pixels or less (filter_tag_det_res);
//   6. sorted top to bottom, then left to right within 10 pixels of height (sorted_boxes).
#pragma once

#include <cstdint>
#include <vector>

#include "image.h"

namespace ocr {

struct DbOptions {
  float threshold = 0.3f;      // binarisation of the probability map
  double box_threshold = 0.6;  // minimum mean probability inside a box
  double unclip_ratio = 1.5;
  double min_size = 3;  // minimum short side before unclip (min_size + 2 after)
  int max_candidates = 1000;
};

struct TextBox {
  Quad corners;  // whole-pixel coordinates in the image
  double score = 0;
};

// `map` is a row-major map_height x map_width probability map computed on the image resized to
// that size; the boxes are in the coordinates of the image_width x image_height image.
std::vector<TextBox> detect_text_boxes(const std::vector<float>& map, int map_width, int map_height,
                                       int image_width, int image_height, const DbOptions& options);

}  // namespace ocr
