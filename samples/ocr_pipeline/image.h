// RGB images for the OCR pipeline: reading (binary PPM / PGM, no decoder library needed),
// bilinear resizing, the 180 and 90 degree rotations, and the perspective crop of a text box.
// Every function is plain C++17 arithmetic in double, without libm beyond floor and sqrt, so
// the x86 and aarch64 builds give the same bytes (the build turns off FMA contraction).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ocr {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // height x width x 3, row-major, R G B

  uint8_t at(int x, int y, int channel) const {
    return rgb[(static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 3 +
               static_cast<size_t>(channel)];
  }
};

struct Point {
  double x = 0, y = 0;
};
// A text box: top-left, top-right, bottom-right, bottom-left (clockwise in image coordinates).
using Quad = std::array<Point, 4>;

// A binary PPM (P6) or PGM (P5, grey made RGB), 8-bit (maxval 255), comments allowed in the
// header. Throws std::runtime_error naming the file for a missing, unreadable, truncated or
// other kind of file.
Image read_image(const std::string& path);

// Bilinear, half-pixel centres (cv2.INTER_LINEAR's geometry), rounded to the nearest byte.
Image resize_bilinear(const Image& image, int width, int height);
Image rotate_180(const Image& image);
// Counter-clockwise by 90 degrees (PaddleOCR's np.rot90 of a tall crop).
Image rotate_90_counter_clockwise(const Image& image);

// PaddleOCR's get_rotate_crop_image: the box's quadrilateral mapped onto an upright rectangle
// of width max(|p0 p1|, |p3 p2|) and height max(|p0 p3|, |p1 p2|) (truncated to integers) by a
// perspective transform, bicubic (a = -0.75, as cv2.INTER_CUBIC), edge pixels replicated; a
// crop at least 1.5 times taller than wide is turned upright (rotated 90 degrees
// counter-clockwise). Empty (0 x 0) for a degenerate box.
Image crop_text_box(const Image& image, const Quad& box);

}  // namespace ocr
