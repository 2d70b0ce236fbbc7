// Images are decoded by tensor_io's decode_image_rgb (stb_image behind its checks: jpg, png, bmp),
// the board tools' decoder.
#include "openbpu/calibration/image_preprocess.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "colour_conversion.h"
#include "image_sample.h"
#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/tensor_io/image_decode.h"

namespace openbpu::calibration {

namespace {

struct Axis {
  int i0, i1;
  double f;  // weight of i1
};

// Where resized index `dst` (of dst_len) samples a source axis of src_len (half-pixel centres).
Axis source_axis(int64_t dst, int64_t dst_len, int src_len) {
  double s = (static_cast<double>(dst) + 0.5) * src_len / static_cast<double>(dst_len) - 0.5;
  s = std::clamp(s, 0.0, static_cast<double>(src_len - 1));
  const int i0 = static_cast<int>(std::floor(s));
  return {i0, std::min(i0 + 1, src_len - 1), s - i0};
}

// The virtual resized image and where it sits in the output.
struct Placement {
  int64_t resized_h, resized_w, offset_y, offset_x;
};

Placement place(const ImageRecipe& r, int h, int w) {
  const double H = static_cast<double>(r.height), W = static_cast<double>(r.width);
  switch (r.mode) {
    case ResizeMode::kStretch: return {r.height, r.width, 0, 0};
    case ResizeMode::kShortSideCrop: {
      const double scale = static_cast<double>(r.short_side) / std::min(h, w);
      const auto rh = std::max<int64_t>(r.height, std::llround(h * scale));
      const auto rw = std::max<int64_t>(r.width, std::llround(w * scale));
      return {rh, rw, -((rh - r.height) / 2), -((rw - r.width) / 2)};
    }
    case ResizeMode::kLetterbox: {
      const double scale = std::min(H / h, W / w);
      const auto rh = std::clamp<int64_t>(std::llround(h * scale), 1, r.height);
      const auto rw = std::clamp<int64_t>(std::llround(w * scale), 1, r.width);
      return {rh, rw, (r.height - rh) / 2, (r.width - rw) / 2};
    }
    case ResizeMode::kHeightPadRight: {
      const auto rw = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(H * w / h)), 1, r.width);
      return {r.height, rw, 0, 0};
    }
  }
  return {r.height, r.width, 0, 0};
}

// The colour type's channels from bilinear RGB.
void convert(config::InputType colour, const double rgb[3], double v[3]) {
  v[0] = rgb[0], v[1] = rgb[1], v[2] = rgb[2];
  switch (colour) {
    case config::InputType::kBgr: v[0] = rgb[2], v[2] = rgb[0]; break;
    case config::InputType::kYuv444: {
      const Yuv yuv = rgb_to_yuv_bt601_full(rgb[0], rgb[1], rgb[2]);
      v[0] = yuv.y, v[1] = yuv.u, v[2] = yuv.v;
      break;
    }
    case config::InputType::kGray: v[0] = rgb_to_gray(rgb[0], rgb[1], rgb[2]); break;
    default: break;
  }
}

}  // namespace

kernels::Tensor preprocess_image(const std::filesystem::path& file, const ImageRecipe& recipe) {
  const std::string bytes = read_file(file);
  int w = 0, h = 0;
  std::vector<uint8_t> pixels;
  try {
    pixels = tensor_io::decode_image_rgb({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()},
                                         file.string(), &h, &w);
  } catch (const std::runtime_error& e) {
    raise(e.what());  // "<file>: cannot decode the image (<reason>)", as the tools' Error
  }
  const int64_t H = recipe.height, W = recipe.width,
                C = recipe.colour == config::InputType::kGray ? 1 : 3;
  const bool nchw = recipe.layout == config::Layout::kNchw;
  kernels::Tensor out(kernels::DataType::kUint8,
                      nchw ? std::vector<int64_t>{1, C, H, W} : std::vector<int64_t>{1, H, W, C});
  uint8_t* dst = out.data<uint8_t>();
  const Placement p = place(recipe, h, w);
  auto at = [&](int y, int x, int c) -> double {
    return pixels[(static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 3 +
                  static_cast<size_t>(c)];
  };
  for (int64_t y = 0; y < H; ++y) {
    const int64_t ry = y - p.offset_y;
    const Axis ay = source_axis(std::clamp<int64_t>(ry, 0, p.resized_h - 1), p.resized_h, h);
    for (int64_t x = 0; x < W; ++x) {
      const int64_t rx = x - p.offset_x;
      double v[3] = {double(recipe.pad), double(recipe.pad), double(recipe.pad)};
      if (ry >= 0 && ry < p.resized_h && rx >= 0 && rx < p.resized_w) {
        const Axis ax = source_axis(rx, p.resized_w, w);
        double rgb[3];
        for (int c = 0; c < 3; ++c) {
          const double top = at(ay.i0, ax.i0, c) * (1 - ax.f) + at(ay.i0, ax.i1, c) * ax.f;
          const double bottom = at(ay.i1, ax.i0, c) * (1 - ax.f) + at(ay.i1, ax.i1, c) * ax.f;
          rgb[c] = top * (1 - ay.f) + bottom * ay.f;
        }
        convert(recipe.colour, rgb, v);
      }
      for (int64_t c = 0; c < C; ++c) {
        const int64_t index = nchw ? (c * H + y) * W + x : (y * W + x) * C + c;
        dst[index] = static_cast<uint8_t>(std::nearbyint(std::clamp(v[c], 0.0, 255.0)));
      }
    }
  }
  return out;
}

Tensor read_image_sample(const std::filesystem::path& file, const CalibrationSource& source) {
  const auto& shape = source.shape;
  if (shape.size() != 4 || shape[0] != 1) {
    raise(file.string(), ": images are read for 4-D inputs with N = 1; input '", source.input_name,
          "' has input_shape ", kernels::shape_to_string(shape));
  }
  const bool nchw = source.layout_train == config::Layout::kNchw;
  const int64_t channels = nchw ? shape[1] : shape[3];
  const bool gray = source.type_train == config::InputType::kGray;
  if (channels != (gray ? 1 : 3)) {
    raise(file.string(), ": input '", source.input_name, "' (",
          config::to_string(source.type_train), ") has ", channels, " channels in input_shape ",
          kernels::shape_to_string(shape));
  }
  ImageRecipe recipe;
  recipe.height = nchw ? shape[2] : shape[1];
  recipe.width = nchw ? shape[3] : shape[2];
  recipe.colour = source.type_train;
  recipe.layout = source.layout_train;
  return preprocess_image(file, recipe);
}

}  // namespace openbpu::calibration
