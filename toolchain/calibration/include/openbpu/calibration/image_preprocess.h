// Image preprocessing: one definition for calibration samples read from images
// (preprocess_on: the whole image stretched to input_shape) and hb_eval_preprocess (the named
// evaluation recipes of the model families: crop, letterbox, keep-ratio padding).
//
// An image is decoded (stb_image: jpg, png, bmp), resized with bilinear interpolation into a
// virtual image of resized_h x resized_w (half-pixel centres, edges clamped, as OpenCV's
// INTER_LINEAR without anti-aliasing), placed at (offset_y, offset_x) in the H x W output (a
// negative offset crops, a positive one pads), converted to the colour type (rgb as decoded;
// bgr by channel swap; yuv444 BT.601 full range; gray 0.299 R + 0.587 G + 0.114 B), rounded to
// uint8 (ties to even); output pixels outside the image take `pad` in every channel.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "openbpu/config/compile_config.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::calibration {

enum class ResizeMode {
  kStretch,         // the whole image to H x W
  kShortSideCrop,   // the short side to `short_side` (aspect kept), then the centre H x W
  kLetterbox,       // fit inside H x W (aspect kept), centred, the rest `pad`
  kHeightPadRight,  // height H, width H·w/h rounded up but at most W, left-aligned, the rest `pad`
};

struct ImageRecipe {
  ResizeMode mode = ResizeMode::kStretch;
  int64_t height = 0, width = 0;                       // the output
  int64_t short_side = 0;                              // kShortSideCrop
  uint8_t pad = 0;                                     // kLetterbox, kHeightPadRight
  config::InputType colour = config::InputType::kRgb;  // rgb, bgr, yuv444, gray
  config::Layout layout = config::Layout::kNchw;       // of the [1, C, H, W] / [1, H, W, C] output
};

// The recipe applied to the image in `file`: uint8 [1, C, H, W] (NCHW) or [1, H, W, C].
// Throws Error naming the file when it cannot be read or decoded.
kernels::Tensor preprocess_image(const std::filesystem::path& file, const ImageRecipe& recipe);

// hb_eval_preprocess's model names: a recipe per model the zoo and samples convert.
struct NamedRecipe {
  std::string_view name;    // -m
  std::string_view family;  // for --help
  ImageRecipe recipe;
};
const std::vector<NamedRecipe>& named_recipes();
// nullptr when unknown.
const NamedRecipe* find_recipe(std::string_view name);

}  // namespace openbpu::calibration
