// Colour conversions of calibration samples (values 0..255, not rounded here).
//
// BT.601 full range (JFIF), the inverse of HzPreprocess's yuv444 -> rgb
// (docs/quantized_ops.md): Y = 0.299 R + 0.587 G + 0.114 B, U = 128 + (B - Y) / 1.772,
// V = 128 + (R - Y) / 1.402. Video range maps Y to 16 + Y * 219/255 and U, V to
// 128 + (C - 128) * 224/255, the inverse of HzPreprocess's bt601_video expansion.
#pragma once

namespace openbpu::calibration {

struct Yuv {
  double y, u, v;
};

inline Yuv rgb_to_yuv_bt601_full(double r, double g, double b) {
  const double y = 0.299 * r + 0.587 * g + 0.114 * b;
  return {y, 128.0 + (b - y) / 1.772, 128.0 + (r - y) / 1.402};
}

inline Yuv yuv_full_to_video(Yuv c) {
  return {16.0 + c.y * 219.0 / 255.0, 128.0 + (c.u - 128.0) * 224.0 / 255.0,
          128.0 + (c.v - 128.0) * 224.0 / 255.0};
}

inline double rgb_to_gray(double r, double g, double b) {
  return 0.299 * r + 0.587 * g + 0.114 * b;
}

}  // namespace openbpu::calibration
