// What each PP-OCR model is fed, prepared as PaddleOCR prepares it: the image resized to the
// model's input (det: DetResizeForTest to the input's height and width; cls and rec:
// resize_norm_img, the line resized to the input's height keeping its aspect ratio, at most the
// input's width, the rest padding) and the normalisation of NormalizeImage, (x / 255 - mean) /
// std per channel of the BGR image PaddleOCR reads with cv2.
#pragma once

#include <array>
#include <vector>

#include "image.h"

namespace ocr {

struct Normalization {
  std::array<float, 3> mean, std;  // B, G, R, on x / 255
};

struct ModelInput {
  Image image;      // the input's height x width, RGB; columns from valid_width on are padding
  int valid_width;  // (filled with the mean: the closest byte to a normalised 0)
  Normalization normalization;

  // The float tensor PaddleOCR feeds, [3, height, width] in B, G, R order: (x / 255 - mean) /
  // std, and 0 in the padding.
  std::vector<float> to_float_chw() const;
};

// det: the page resized to exactly height x width; ImageNet's mean and std applied, as
// PaddleOCR applies them, to the B, G, R channels in that order.
ModelInput detection_input(const Image& page, int height, int width);
// cls and rec: a text line (mean 0.5, std 0.5).
ModelInput line_input(const Image& line, int height, int width);

}  // namespace ocr
