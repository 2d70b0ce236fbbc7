// Image decoding uses Debian's libstb (stb_image): one well-kept library that reads jpg, png and
// bmp without pulling in libjpeg/libpng separately.
#include "image_sample.h"

#include <stb/stb_image.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "colour_conversion.h"
#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"

namespace openbpu::calibration {

namespace {

struct StbFree {
  void operator()(unsigned char* p) const { stbi_image_free(p); }
};

// Bilinear sample of channel c at (y, x) in source pixels (half-pixel centres), edge clamped.
struct Resampler {
  const unsigned char* pixels;
  int width, height, channels;

  double at(int y, int x, int c) const {
    return pixels[(static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) *
                      static_cast<size_t>(channels) +
                  static_cast<size_t>(c)];
  }
};

struct Axis {
  int i0, i1;
  double f;  // weight of i1
};

Axis source_axis(int64_t dst, int64_t dst_len, int src_len) {
  double s = (static_cast<double>(dst) + 0.5) * src_len / static_cast<double>(dst_len) - 0.5;
  s = std::clamp(s, 0.0, static_cast<double>(src_len - 1));
  const int i0 = static_cast<int>(std::floor(s));
  return {i0, std::min(i0 + 1, src_len - 1), s - i0};
}

}  // namespace

Tensor read_image_sample(const std::filesystem::path& file, const CalibrationSource& source) {
  const auto& shape = source.shape;
  if (shape.size() != 4 || shape[0] != 1) {
    raise(file.string(), ": images are read for 4-D inputs with N = 1; input '", source.input_name,
          "' has input_shape ", kernels::shape_to_string(shape));
  }
  const bool nchw = source.layout_train == config::Layout::kNchw;
  const int64_t channels = nchw ? shape[1] : shape[3];
  const int64_t height = nchw ? shape[2] : shape[1];
  const int64_t width = nchw ? shape[3] : shape[2];
  const bool gray = source.type_train == config::InputType::kGray;
  if (channels != (gray ? 1 : 3)) {
    raise(file.string(), ": input '", source.input_name, "' (",
          config::to_string(source.type_train), ") has ", channels, " channels in input_shape ",
          kernels::shape_to_string(shape));
  }

  const std::string bytes = read_file(file);
  int w = 0, h = 0, n = 0;
  std::unique_ptr<unsigned char, StbFree> pixels(
      stbi_load_from_memory(reinterpret_cast<const unsigned char*>(bytes.data()),
                            static_cast<int>(bytes.size()), &w, &h, &n, 3));
  if (!pixels) {
    raise(file.string(), ": cannot decode the image (", stbi_failure_reason(), ")");
  }
  const Resampler src{pixels.get(), w, h, 3};

  Tensor out(kernels::DataType::kUint8, shape);
  uint8_t* dst = out.data<uint8_t>();
  auto to_u8 = [](double v) {
    return static_cast<uint8_t>(std::nearbyint(std::clamp(v, 0.0, 255.0)));
  };
  for (int64_t y = 0; y < height; ++y) {
    const Axis ay = source_axis(y, height, h);
    for (int64_t x = 0; x < width; ++x) {
      const Axis ax = source_axis(x, width, w);
      double rgb[3];
      for (int c = 0; c < 3; ++c) {
        const double top = src.at(ay.i0, ax.i0, c) * (1 - ax.f) + src.at(ay.i0, ax.i1, c) * ax.f;
        const double bottom = src.at(ay.i1, ax.i0, c) * (1 - ax.f) + src.at(ay.i1, ax.i1, c) * ax.f;
        rgb[c] = top * (1 - ay.f) + bottom * ay.f;
      }
      double v[3] = {rgb[0], rgb[1], rgb[2]};
      switch (source.type_train) {
        case config::InputType::kBgr:
          v[0] = rgb[2];
          v[2] = rgb[0];
          break;
        case config::InputType::kYuv444: {
          const Yuv yuv = rgb_to_yuv_bt601_full(rgb[0], rgb[1], rgb[2]);
          v[0] = yuv.y;
          v[1] = yuv.u;
          v[2] = yuv.v;
          break;
        }
        case config::InputType::kGray: v[0] = rgb_to_gray(rgb[0], rgb[1], rgb[2]); break;
        default: break;
      }
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t index = nchw ? (c * height + y) * width + x : (y * width + x) * channels + c;
        dst[index] = to_u8(v[c]);
      }
    }
  }
  return out;
}

}  // namespace openbpu::calibration
