#include "openbpu/kernels/image_resize.h"

#include "openbpu/kernels/quantized_tables.h"
#include "openbpu/simulator/integer_arithmetic.h"

namespace openbpu::kernels {

namespace sim = openbpu::simulator;

namespace {

// Resizes a in_w × in_h window of `channels` interleaved bytes per pixel starting at `src`
// (rows `stride` bytes apart) to out_w × out_h, written densely to `out`.
void resize_plane(const uint8_t* src, int64_t stride, int64_t in_w, int64_t in_h, int channels, int64_t out_w,
                  int64_t out_h, uint8_t* out) {
  const ResizeAxisTable ax = quantized_resize_axis("linear", "align_corners", "floor", in_w, out_w);
  const ResizeAxisTable ay = quantized_resize_axis("linear", "align_corners", "floor", in_h, out_h);
  const int64_t one = int64_t{1} << sim::kResizeFractionBits;
  for (int64_t oh = 0; oh < out_h; ++oh) {
    const uint8_t* r0 = src + ay.i0[size_t(oh)] * stride;
    const uint8_t* r1 = src + ay.i1[size_t(oh)] * stride;
    const int64_t wy1 = ay.fraction[size_t(oh)], wy0 = one - wy1;
    uint8_t* row = out + oh * out_w * channels;
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const int64_t c0 = ax.i0[size_t(ow)] * channels, c1 = ax.i1[size_t(ow)] * channels;
      const int64_t wx1 = ax.fraction[size_t(ow)], wx0 = one - wx1;
      for (int c = 0; c < channels; ++c) {
        const int64_t sum = (r0[c0 + c] * wx0 + r0[c1 + c] * wx1) * wy0 + (r1[c0 + c] * wx0 + r1[c1 + c] * wx1) * wy1;
        row[ow * channels + c] = sim::saturate<uint8_t>(sim::round_shift_right(sum, 2 * sim::kResizeFractionBits));
      }
    }
  }
}

}  // namespace

void resize_image_roi(ImagePlane y, ImagePlane uv, const ImageRoi& roi, int64_t out_w, int64_t out_h, uint8_t* out) {
  resize_plane(y.data + roi.top * y.stride + roi.left, y.stride, roi.width(), roi.height(), 1, out_w, out_h, out);
  if (uv.data == nullptr) return;
  // The chroma rectangle: one UV pair per 2 × 2 luma pixels.
  resize_plane(uv.data + (roi.top / 2) * uv.stride + (roi.left / 2) * 2, uv.stride, roi.width() / 2, roi.height() / 2, 2,
               out_w / 2, out_h / 2, out + out_w * out_h);
}

}  // namespace openbpu::kernels
