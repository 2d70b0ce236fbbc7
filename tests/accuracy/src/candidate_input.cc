#include "openbpu/accuracy/candidate_input.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"

namespace openbpu::accuracy {

using kernels::DataType;
using kernels::Tensor;

CandidateSource parse_candidate_source(const std::string& name) {
  if (name == "float") return CandidateSource::kFloat;
  if (name == "rgb") return CandidateSource::kRgb;
  if (name == "bgr") return CandidateSource::kBgr;
  if (name == "yuv444") return CandidateSource::kYuv444;
  if (name == "nv12") return CandidateSource::kNv12;
  raise("unknown candidate input '", name, "' (float, rgb, bgr, yuv444, nv12)");
}

CandidateRange parse_candidate_range(const std::string& name) {
  if (name == "full") return CandidateRange::kFull;
  if (name == "video") return CandidateRange::kVideo;
  raise("unknown colour range '", name, "' (full, video)");
}

namespace {

DataType resolved_dtype(const CandidateInputOptions& options) {
  if (options.dtype != DataType::kUndefined) return options.dtype;
  if (options.source == CandidateSource::kFloat) return DataType::kFloat32;
  if (options.offset == 0) return DataType::kUint8;
  if (options.offset == 128) return DataType::kInt8;
  return DataType::kFloat32;
}

template <typename T>
void store(Tensor& out, int64_t index, int64_t value) {
  if (value < std::numeric_limits<T>::lowest() || value > std::numeric_limits<T>::max()) {
    raise("candidate input: value ", value, " does not fit ", kernels::dtype_name(out.dtype()),
          " (check --candidate-input-offset and --candidate-dtype)");
  }
  out.data<T>()[index] = static_cast<T>(value);
}

uint8_t clamp_byte(double value) {
  return static_cast<uint8_t>(std::clamp(std::lround(value), 0L, 255L));
}

}  // namespace

Tensor candidate_input_from_rgb(const Tensor& rgb, const CandidateInputOptions& options) {
  const auto& shape = rgb.shape();
  if (rgb.dtype() != DataType::kUint8 || shape.size() != 4 || shape[0] != 1 || shape[1] != 3) {
    raise("candidate input: expected a uint8 RGB image [1,3,H,W], got ", rgb.describe());
  }
  const int64_t height = shape[2], width = shape[3], plane = height * width;
  const uint8_t* src = rgb.data<uint8_t>();
  // Three planes of the chosen colour type, values 0..255.
  std::vector<uint8_t> planes(static_cast<size_t>(3 * plane));
  const bool yuv =
      options.source == CandidateSource::kYuv444 || options.source == CandidateSource::kNv12;
  for (int64_t i = 0; i < plane; ++i) {
    const double r = src[i], g = src[plane + i], b = src[2 * plane + i];
    uint8_t c0 = 0, c1 = 0, c2 = 0;
    if (options.source == CandidateSource::kRgb) {
      c0 = src[i], c1 = src[plane + i], c2 = src[2 * plane + i];
    } else if (options.source == CandidateSource::kBgr) {
      c0 = src[2 * plane + i], c1 = src[plane + i], c2 = src[i];
    } else if (yuv) {
      // BT.601 full range (JPEG) YCbCr.
      double y = 0.299 * r + 0.587 * g + 0.114 * b;
      double u = -0.168736 * r - 0.331264 * g + 0.5 * b + 128;
      double v = 0.5 * r - 0.418688 * g - 0.081312 * b + 128;
      if (options.range == CandidateRange::kVideo) {
        y = 16 + y * 219.0 / 255.0;
        u = 128 + (u - 128) * 224.0 / 255.0;
        v = 128 + (v - 128) * 224.0 / 255.0;
      }
      c0 = clamp_byte(y), c1 = clamp_byte(u), c2 = clamp_byte(v);
    } else {
      raise("candidate input: the float input is not made from the RGB image");
    }
    planes[static_cast<size_t>(i)] = c0;
    planes[static_cast<size_t>(plane + i)] = c1;
    planes[static_cast<size_t>(2 * plane + i)] = c2;
  }
  if (options.source == CandidateSource::kNv12) {
    if (height % 2 || width % 2) {
      raise("candidate input: nv12 needs an even height and width, got ", height, "x", width);
    }
    for (int64_t c = 1; c <= 2; ++c) {
      uint8_t* p = planes.data() + c * plane;
      for (int64_t y = 0; y < height; y += 2) {
        for (int64_t x = 0; x < width; x += 2) {
          const int64_t at = y * width + x;
          const int sum = p[at] + p[at + 1] + p[at + width] + p[at + width + 1];
          const auto mean = static_cast<uint8_t>((sum + 2) / 4);
          p[at] = p[at + 1] = p[at + width] = p[at + width + 1] = mean;
        }
      }
    }
  }
  const DataType dtype = resolved_dtype(options);
  const kernels::Shape out_shape =
      options.nhwc ? kernels::Shape{1, height, width, 3} : kernels::Shape{1, 3, height, width};
  Tensor out(dtype, out_shape);
  for (int64_t c = 0; c < 3; ++c) {
    for (int64_t i = 0; i < plane; ++i) {
      const int64_t value = planes[static_cast<size_t>(c * plane + i)] - options.offset;
      const int64_t at = options.nhwc ? i * 3 + c : c * plane + i;
      switch (dtype) {
        case DataType::kUint8: store<uint8_t>(out, at, value); break;
        case DataType::kInt8: store<int8_t>(out, at, value); break;
        case DataType::kInt16: store<int16_t>(out, at, value); break;
        case DataType::kFloat32: out.data<float>()[at] = static_cast<float>(value); break;
        default:
          raise("candidate input: element type ", kernels::dtype_name(dtype),
                " is not supported (float32, uint8, int8, int16)");
      }
    }
  }
  return out;
}

Tensor candidate_input(const OcrSample& sample, const CandidateInputOptions& options) {
  if (options.source == CandidateSource::kFloat) {
    Tensor input = read_npy(sample.input);
    const DataType dtype = resolved_dtype(options);
    if (dtype != DataType::kFloat32 || options.nhwc || options.offset != 0) {
      raise(
          "candidate input: the float input is fed as float32 NCHW without offset; layout, "
          "offset and element type apply to the image inputs (rgb, bgr, yuv444, nv12)");
    }
    return input;
  }
  return candidate_input_from_rgb(read_npy(sample.rgb_uint8), options);
}

}  // namespace openbpu::accuracy
