// HzQuantizedResizeUpsample (docs/quantized_ops.md): integer resizing of N x C x H x W int8/int16
// tensors to output_size. The source coordinate of each output index is the rational number the
// ONNX coordinate transformation gives for the scale output/input length; nearest rounds it
// exactly (pure selection), linear takes it in fixed point with 10 fractional bits
// (simulator::resize_linear_coordinate) and blends the four neighbours with integer weights.
#include <algorithm>

#include "families.h"
#include "horizon_attributes.h"
#include "openbpu/kernels/dispatch.h"

namespace openbpu::kernels {

namespace {

namespace sim = openbpu::simulator;
using horizon::check_activation_type;

using ActivationTypes = TypeList<int8_t, int16_t>;

enum class Coordinates {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn
};
enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

constexpr std::string_view kOp = "HzQuantizedResizeUpsample";

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

class QuantizedResizeKernel final : public Kernel {
 public:
  explicit QuantizedResizeKernel(const NodeInfo& node) {
    const std::string mode = node.attrs.get_string("mode", "nearest");
    OPENBPU_CHECK(mode == "nearest" || mode == "linear", kOp,
                  ": mode must be \"nearest\" or \"linear\", got \"", mode, "\"");
    linear_ = mode == "linear";
    coordinates_ =
        parse_coordinates(node.attrs.get_string("coordinate_transformation_mode", "half_pixel"));
    rounding_ = parse_rounding(node.attrs.get_string("nearest_mode", "round_prefer_floor"));
    output_size_ = node.attrs.get_ints("output_size");
    OPENBPU_CHECK(output_size_.size() == 2 && output_size_[0] > 0 && output_size_[1] > 0, kOp,
                  ": output_size must be [H', W'] with positive entries, got ",
                  shape_to_string(output_size_));
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    check_activation_type(kOp, "x", x.dtype(), x.describe());
    OPENBPU_CHECK(x.rank() == 4, kOp, ": x must be N x C x H x W, got ", x.describe());
    const int64_t in_h = x.dim(2), in_w = x.dim(3);
    const int64_t out_h = output_size_[0], out_w = output_size_[1];
    Tensor& y = ctx.allocate_output(0, x.dtype(), {x.dim(0), x.dim(1), out_h, out_w});
    if (y.element_count() == 0) return;
    OPENBPU_CHECK(in_h > 0 && in_w > 0, kOp, ": cannot resize the empty input ", x.describe());
    const int64_t planes = x.dim(0) * x.dim(1);
    dispatch<ActivationTypes>(x.dtype(), kOp, [&]<typename T>() {
      const T* px = x.data<T>();
      T* py = y.data<T>();
      if (!linear_) {
        std::vector<int64_t> rows(static_cast<size_t>(out_h)), cols(static_cast<size_t>(out_w));
        for (int64_t o = 0; o < out_h; ++o) {
          rows[size_t(o)] =
              nearest_index(rounding_, source_coordinate(coordinates_, o, in_h, out_h), in_h);
        }
        for (int64_t o = 0; o < out_w; ++o) {
          cols[size_t(o)] =
              nearest_index(rounding_, source_coordinate(coordinates_, o, in_w, out_w), in_w);
        }
        parallel_for(ctx.thread_pool(), planes, 1, [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            const T* in = px + p * in_h * in_w;
            T* out = py + p * out_h * out_w;
            for (int64_t oh = 0; oh < out_h; ++oh) {
              const T* row = in + rows[size_t(oh)] * in_w;
              for (int64_t ow = 0; ow < out_w; ++ow) out[oh * out_w + ow] = row[cols[size_t(ow)]];
            }
          }
        });
        return;
      }
      const LinearAxis ay = linear_axis(coordinates_, in_h, out_h);
      const LinearAxis ax = linear_axis(coordinates_, in_w, out_w);
      const int64_t one = int64_t{1} << sim::kResizeFractionBits;
      parallel_for(ctx.thread_pool(), planes, 1, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const T* in = px + p * in_h * in_w;
          T* out = py + p * out_h * out_w;
          for (int64_t oh = 0; oh < out_h; ++oh) {
            const T* r0 = in + ay.i0[size_t(oh)] * in_w;
            const T* r1 = in + ay.i1[size_t(oh)] * in_w;
            const int64_t wy1 = ay.fraction[size_t(oh)], wy0 = one - wy1;
            for (int64_t ow = 0; ow < out_w; ++ow) {
              const int64_t c0 = ax.i0[size_t(ow)], c1 = ax.i1[size_t(ow)];
              const int64_t wx1 = ax.fraction[size_t(ow)], wx0 = one - wx1;
              const int64_t sum =
                  (r0[c0] * wx0 + r0[c1] * wx1) * wy0 + (r1[c0] * wx0 + r1[c1] * wx1) * wy1;
              out[oh * out_w + ow] =
                  sim::saturate<T>(sim::round_shift_right(sum, 2 * sim::kResizeFractionBits));
            }
          }
        }
      });
    });
  }

 private:
  bool linear_ = false;
  Coordinates coordinates_ = Coordinates::kHalfPixel;
  Rounding rounding_ = Rounding::kRoundPreferFloor;
  std::vector<int64_t> output_size_;
};

}  // namespace

void register_horizon_quantized_resize_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"horizon",
                  "HzQuantizedResizeUpsample",
                  1,
                  {{"mode", AttrKind::kString},
                   {"coordinate_transformation_mode", AttrKind::kString},
                   {"nearest_mode", AttrKind::kString},
                   {"output_size", AttrKind::kInts, true},
                   {"input_scale", AttrKind::kFloat},
                   {"output_scale", AttrKind::kFloat}},
                  &make_kernel<QuantizedResizeKernel>});
}

}  // namespace openbpu::kernels
