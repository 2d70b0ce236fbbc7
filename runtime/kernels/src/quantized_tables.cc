// Resize index tables and average-pool divisors (quantized_tables.h), shared by the integer
// kernels and the BPU compiler.
#include "openbpu/kernels/quantized_tables.h"

#include <algorithm>
#include <string>

#include "openbpu/kernels/error.h"
#include "openbpu/simulator/integer_arithmetic.h"

namespace openbpu::kernels {

namespace {

namespace sim = openbpu::simulator;

constexpr std::string_view kOp = "HzQuantizedResizeUpsample";

enum class Coordinates {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn
};
enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

Coordinates parse_coordinates(const std::string& mode) {
  // half_pixel_symmetric equals half_pixel when the scale is output / input length.
  if (mode == "half_pixel" || mode == "half_pixel_symmetric") return Coordinates::kHalfPixel;
  if (mode == "pytorch_half_pixel") return Coordinates::kPytorchHalfPixel;
  if (mode == "align_corners") return Coordinates::kAlignCorners;
  if (mode == "asymmetric") return Coordinates::kAsymmetric;
  if (mode == "tf_half_pixel_for_nn") return Coordinates::kTfHalfPixelForNn;
  fail(kOp,
       ": coordinate_transformation_mode must be half_pixel, half_pixel_symmetric, "
       "pytorch_half_pixel, align_corners, asymmetric or tf_half_pixel_for_nn, got \"",
       mode, "\"");
}

Rounding parse_rounding(const std::string& mode) {
  if (mode == "round_prefer_floor") return Rounding::kRoundPreferFloor;
  if (mode == "round_prefer_ceil") return Rounding::kRoundPreferCeil;
  if (mode == "floor") return Rounding::kFloor;
  if (mode == "ceil") return Rounding::kCeil;
  fail(kOp, ": nearest_mode must be round_prefer_floor, round_prefer_ceil, floor or ceil, got \"",
       mode, "\"");
}

// Source coordinate of output index o as numerator / denominator (denominator > 0).
struct Rational {
  int64_t numerator;
  int64_t denominator;
};

Rational source_coordinate(Coordinates mode, int64_t o, int64_t in, int64_t out) {
  switch (mode) {
    case Coordinates::kHalfPixel: return {(2 * o + 1) * in - out, 2 * out};
    case Coordinates::kPytorchHalfPixel:
      return out > 1 ? Rational{(2 * o + 1) * in - out, 2 * out} : Rational{0, 1};
    case Coordinates::kAlignCorners:
      return out > 1 ? Rational{o * (in - 1), out - 1} : Rational{0, 1};
    case Coordinates::kAsymmetric: return {o * in, out};
    case Coordinates::kTfHalfPixelForNn: return {(2 * o + 1) * in, 2 * out};
  }
  return {0, 1};
}

int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Nearest input index of a rational coordinate, clamped to [0, in).
int64_t nearest_index(Rounding rounding, Rational c, int64_t in) {
  const int64_t lower = floor_div(c.numerator, c.denominator);
  const int64_t twice_fraction = 2 * (c.numerator - lower * c.denominator);  // vs denominator
  int64_t index = lower;
  switch (rounding) {
    case Rounding::kRoundPreferFloor:
      index = twice_fraction <= c.denominator ? lower : lower + 1;
      break;
    case Rounding::kRoundPreferCeil:
      index = twice_fraction < c.denominator ? lower : lower + 1;
      break;
    case Rounding::kFloor: index = lower; break;
    case Rounding::kCeil: index = twice_fraction == 0 ? lower : lower + 1; break;
  }
  return std::clamp<int64_t>(index, 0, in - 1);
}

// Per output index of one axis: the two input indices and the fixed-point weight of the second.
struct LinearAxis {
  std::vector<int64_t> i0, i1;
  std::vector<int64_t> fraction;  // in [0, 2^10)
};

LinearAxis linear_axis(Coordinates mode, int64_t in, int64_t out) {
  LinearAxis a;
  const int64_t one = int64_t{1} << sim::kResizeFractionBits;
  for (int64_t o = 0; o < out; ++o) {
    const Rational c = source_coordinate(mode, o, in, out);
    const int64_t fixed = sim::resize_linear_coordinate(c.numerator, c.denominator, in);
    const int64_t i0 = fixed >> sim::kResizeFractionBits;
    a.i0.push_back(i0);
    a.i1.push_back(std::min(i0 + 1, in - 1));
    a.fraction.push_back(fixed & (one - 1));
  }
  return a;
}

// Per output position of one axis: the number of kernel taps inside [lo, hi) of input positions.
std::vector<int64_t> taps_per_position(int64_t out, int64_t stride, int64_t pad_begin,
                                       int64_t kernel, int64_t dilation, int64_t lo, int64_t hi) {
  std::vector<int64_t> counts(static_cast<size_t>(out), 0);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t pos = o * stride - pad_begin + k * dilation;
      counts[size_t(o)] += pos >= lo && pos < hi;
    }
  }
  return counts;
}

}  // namespace

ResizeAxisTable quantized_resize_axis(std::string_view mode,
                                      std::string_view coordinate_transformation_mode,
                                      std::string_view nearest_mode, int64_t in, int64_t out) {
  OPENBPU_CHECK(mode == "nearest" || mode == "linear", kOp,
                ": mode must be \"nearest\" or \"linear\", got \"", mode, "\"");
  const Coordinates coordinates = parse_coordinates(std::string(coordinate_transformation_mode));
  const Rounding rounding = parse_rounding(std::string(nearest_mode));
  if (mode == "linear") {
    const LinearAxis a = linear_axis(coordinates, in, out);
    return {a.i0, a.i1, a.fraction};
  }
  ResizeAxisTable t;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t i = nearest_index(rounding, source_coordinate(coordinates, o, in, out), in);
    t.i0.push_back(i);
    t.i1.push_back(i);
    t.fraction.push_back(0);
  }
  return t;
}

std::array<std::vector<int64_t>, 3> average_pool_axis_counts(const WindowGeometry& g,
                                                             bool count_include_pad) {
  const Window3D w(g);
  const size_t r = g.rank();
  std::array<std::vector<int64_t>, 3> counts;
  for (size_t a = 0; a < 3; ++a) {
    const bool real_axis = a + r >= 3;
    const int64_t pad_end = real_axis ? g.pads_end[a + r - 3] : 0;
    const int64_t lo = count_include_pad ? -w.pads[a] : 0;
    const int64_t hi = count_include_pad ? w.in[a] + pad_end : w.in[a];
    counts[a] =
        taps_per_position(w.out[a], w.strides[a], w.pads[a], w.kernel[a], w.dilations[a], lo, hi);
  }
  return counts;
}

}  // namespace openbpu::kernels
