// Image calibration samples (preprocess_on): the whole image stretched to input_shape
// (image_preprocess.h, ResizeMode::kStretch) in input_type_train and input_layout_train.
#pragma once

#include <filesystem>

#include "openbpu/calibration/calibration_dataset.h"

namespace openbpu::calibration {

// Returns uint8 shaped input_shape (4-D, N = 1, C matching the colour type). Throws Error
// naming the file and the rule.
Tensor read_image_sample(const std::filesystem::path& file, const CalibrationSource& source);

}  // namespace openbpu::calibration
