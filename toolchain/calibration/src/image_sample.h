// Image calibration samples (preprocess_on): decode, resize, colour format, layout.
#pragma once

#include <filesystem>

#include "openbpu/calibration/calibration_dataset.h"

namespace openbpu::calibration {

// Decodes a jpg/png/bmp file (stb_image), resizes it to input_shape's H and W with bilinear
// interpolation (half-pixel centres, edge clamped), converts it to input_type_train (rgb, bgr,
// yuv444 with BT.601 full range, gray as 0.299 R + 0.587 G + 0.114 B) and lays it out in
// input_layout_train. Returns uint8 shaped input_shape (N must be 1). Throws Error naming the
// file when it cannot be decoded.
Tensor read_image_sample(const std::filesystem::path& file, const CalibrationSource& source);

}  // namespace openbpu::calibration
