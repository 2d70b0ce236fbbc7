#include "model_input.h"

#include <algorithm>
#include <cmath>

namespace ocr {

std::vector<float> ModelInput::to_float_chw() const {
  const size_t plane = static_cast<size_t>(image.width) * static_cast<size_t>(image.height);
  std::vector<float> out(3 * plane, 0.0f);
  for (int c = 0; c < 3; ++c) {
    const int rgb_channel = 2 - c;  // B, G, R
    for (int y = 0; y < image.height; ++y) {
      for (int x = 0; x < valid_width; ++x) {
        const float v = static_cast<float>(image.at(x, y, rgb_channel));
        out[static_cast<size_t>(c) * plane + static_cast<size_t>(y) * image.width + x] =
            (v / 255.0f - normalization.mean[c]) / normalization.std[c];
      }
    }
  }
  return out;
}

ModelInput detection_input(const Image& page, int height, int width) {
  return {resize_bilinear(page, width, height),
          width,
          {{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}}};
}

ModelInput line_input(const Image& line, int height, int width) {
  const Normalization half{{0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f}};
  const double ratio = static_cast<double>(line.width) / line.height;
  const int resized_width =
      std::min(width, std::max(1, static_cast<int>(std::ceil(height * ratio))));
  const Image resized = resize_bilinear(line, resized_width, height);
  ModelInput input{
      {width, height, std::vector<uint8_t>(static_cast<size_t>(width) * height * 3, 128)},
      resized_width,
      half};
  for (int y = 0; y < height; ++y) {
    std::copy_n(&resized.rgb[static_cast<size_t>(y) * resized_width * 3],
                static_cast<size_t>(resized_width) * 3,
                &input.image.rgb[static_cast<size_t>(y) * width * 3]);
  }
  return input;
}

}  // namespace ocr
