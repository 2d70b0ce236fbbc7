// The resizer of a model input compiled with input_source: resizer (hbDNNRoiInfer): a region
// of interest of an NV12 or Y image, resized to the model's input size. Defined once here: the
// runtime applies it before the model's first layer on x86 and on the board alike, so both give
// the same bytes.
//
// Sampling (docs/runtime.md, "ROI inference"): bilinear with corners mapped to corners — output
// position o of an axis of `out` samples the ROI at o · (in − 1) / (out − 1) — in the BPU's
// fixed-point resize coordinates (simulator::resize_linear_coordinate, kResizeFractionBits
// fractional bits) and integer blending, the same tables as HzQuantizedResizeUpsample with
// mode linear and coordinate_transformation_mode align_corners. The Y plane is resized from the
// ROI, the interleaved UV plane from the ROI's chroma rectangle (left/2, top/2, width/2, height/2)
// to (out_w/2, out_h/2), U and V separately.
#pragma once

#include <cstdint>

namespace openbpu::kernels {

// An inclusive rectangle of an image (hbDNNRoi): columns [left, right], rows [top, bottom].
struct ImageRoi {
  int64_t left = 0, top = 0, right = 0, bottom = 0;
  int64_t width() const { return right - left + 1; }
  int64_t height() const { return bottom - top + 1; }
};

// One plane of an image in memory: its first byte and the bytes between the starts of two rows.
struct ImagePlane {
  const uint8_t* data = nullptr;
  int64_t stride = 0;
};

// Resizes `roi` of an image to out_w × out_h and writes it densely to `out`: the Y plane
// (out_h rows of out_w bytes), then, when `uv.data` is not null, the interleaved UV plane
// (out_h/2 rows of out_w bytes). The caller has checked the ROI against the image (inside it;
// for NV12 left and top even, width and height even) and out_w, out_h ≥ 1 (even for NV12).
void resize_image_roi(ImagePlane y, ImagePlane uv, const ImageRoi& roi, int64_t out_w, int64_t out_h, uint8_t* out);

}  // namespace openbpu::kernels
