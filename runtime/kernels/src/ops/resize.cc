// Resizing: Resize (opsets 10, 11, 13, 18, 19) and the deprecated Upsample (opsets 7 and 9).
//
// Every axis is resampled independently. For each axis a table maps each output coordinate to
// the input positions it reads and their weights (one tap for nearest, two for linear, four for
// cubic, more when antialiasing a downscale). Nearest gathers through the index tables in one
// pass; linear and cubic apply the tables one axis at a time, innermost axis first (the order of
// the ONNX reference), skipping axes whose table is the identity.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"

namespace openbpu::kernels {

namespace {

enum class InterpolationMode { kNearest, kLinear, kCubic };

enum class CoordinateMode {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};

enum class NearestRounding {
  kRoundPreferFloor,
  kRoundPreferCeil,
  kFloor,
  kCeil,
  kLegacy,  // Upsample and Resize-10: floor when upsampling, ceil when downsampling
};

enum class AspectRatioPolicy { kStretch, kNotLarger, kNotSmaller };

InterpolationMode parse_mode(const std::string& op, const std::string& mode, bool allow_cubic) {
  if (mode == "nearest") return InterpolationMode::kNearest;
  if (mode == "linear" || mode == "bilinear") return InterpolationMode::kLinear;
  if (mode == "cubic" && allow_cubic) return InterpolationMode::kCubic;
  fail(op, ": mode must be ", allow_cubic ? "nearest, linear or cubic" : "nearest or linear",
       ", got '", mode, "'");
}

CoordinateMode parse_coordinate_mode(const std::string& mode) {
  if (mode == "half_pixel") return CoordinateMode::kHalfPixel;
  if (mode == "half_pixel_symmetric") return CoordinateMode::kHalfPixelSymmetric;
  if (mode == "pytorch_half_pixel") return CoordinateMode::kPytorchHalfPixel;
  if (mode == "align_corners") return CoordinateMode::kAlignCorners;
  if (mode == "asymmetric") return CoordinateMode::kAsymmetric;
  if (mode == "tf_half_pixel_for_nn") return CoordinateMode::kTfHalfPixelForNn;
  if (mode == "tf_crop_and_resize") return CoordinateMode::kTfCropAndResize;
  fail(
      "Resize: coordinate_transformation_mode must be one of half_pixel, half_pixel_symmetric, "
      "pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, "
      "tf_crop_and_resize; got '",
      mode, "'");
}

NearestRounding parse_nearest_mode(const std::string& mode) {
  if (mode == "round_prefer_floor") return NearestRounding::kRoundPreferFloor;
  if (mode == "round_prefer_ceil") return NearestRounding::kRoundPreferCeil;
  if (mode == "floor") return NearestRounding::kFloor;
  if (mode == "ceil") return NearestRounding::kCeil;
  fail("Resize: nearest_mode must be round_prefer_floor, round_prefer_ceil, floor or ceil; got '",
       mode, "'");
}

AspectRatioPolicy parse_aspect_policy(const std::string& policy) {
  if (policy == "stretch") return AspectRatioPolicy::kStretch;
  if (policy == "not_larger") return AspectRatioPolicy::kNotLarger;
  if (policy == "not_smaller") return AspectRatioPolicy::kNotSmaller;
  fail("Resize: keep_aspect_ratio_policy must be stretch, not_larger or not_smaller; got '", policy,
       "'");
}

// Everything the attributes decide.
struct ResizeConfig {
  InterpolationMode mode = InterpolationMode::kNearest;
  CoordinateMode coordinates = CoordinateMode::kHalfPixel;
  NearestRounding rounding = NearestRounding::kRoundPreferFloor;
  AspectRatioPolicy aspect_policy = AspectRatioPolicy::kStretch;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation_value = 0.0;
  std::vector<int64_t> axes;  // empty: all axes
};

// How one output axis samples its input axis.
struct AxisTable {
  int64_t in_length = 0;
  int64_t out_length = 0;
  int taps = 1;                  // input positions per output position
  std::vector<int64_t> index;    // [out_length * taps], clamped to [0, in_length)
  std::vector<double> weight;    // [out_length * taps] (unused by nearest)
  std::vector<uint8_t> outside;  // [out_length]: 1 → extrapolation_value (tf_crop_and_resize)
  bool has_outside = false;

  bool is_identity() const {
    if (in_length != out_length || has_outside) return false;
    for (int64_t o = 0; o < out_length; ++o) {
      for (int k = 0; k < taps; ++k) {
        const size_t at = static_cast<size_t>(o * taps + k);
        const double w = weight.empty() ? 1.0 : weight[at];
        if (w != 0.0 && (index[at] != o || w != 1.0)) return false;
      }
    }
    return true;
  }
};

// Input coordinate of output coordinate `x` along one axis.
double source_coordinate(const ResizeConfig& cfg, double x, double scale, int64_t in_length,
                         int64_t out_length, double roi_start, double roi_end) {
  const double in_len = static_cast<double>(in_length);
  const double out_len = static_cast<double>(out_length);
  switch (cfg.coordinates) {
    case CoordinateMode::kHalfPixel: return (x + 0.5) / scale - 0.5;
    case CoordinateMode::kHalfPixelSymmetric: {
      const double adjustment = out_len / (scale * in_len);
      const double center = in_len / 2;
      return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    }
    case CoordinateMode::kPytorchHalfPixel: return out_length > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CoordinateMode::kAlignCorners: {
      // The ONNX reference divides by the unrounded output length scale * in_length (which
      // equals out_length when `sizes` is given).
      const double scaled_length = scale * in_len;
      return scaled_length == 1 ? 0.0 : x * (in_len - 1) / (scaled_length - 1);
    }
    case CoordinateMode::kAsymmetric: return x / scale;
    case CoordinateMode::kTfHalfPixelForNn: return (x + 0.5) / scale;
    case CoordinateMode::kTfCropAndResize:
      if (out_length > 1) {
        return roi_start * (in_len - 1) + x * (roi_end - roi_start) * (in_len - 1) / (out_len - 1);
      }
      return 0.5 * (roi_start + roi_end) * (in_len - 1);
  }
  return 0.0;
}

int64_t nearest_index(NearestRounding rounding, double x, bool downsampling) {
  const double lower = std::floor(x);
  const double fraction = x - lower;
  switch (rounding) {
    case NearestRounding::kRoundPreferFloor:
      return static_cast<int64_t>(fraction <= 0.5 ? lower : lower + 1);
    case NearestRounding::kRoundPreferCeil:
      return static_cast<int64_t>(fraction < 0.5 ? lower : lower + 1);
    case NearestRounding::kFloor: return static_cast<int64_t>(lower);
    case NearestRounding::kCeil: return static_cast<int64_t>(std::ceil(x));
    case NearestRounding::kLegacy: return static_cast<int64_t>(downsampling ? std::ceil(x) : lower);
  }
  return 0;
}

double cubic_kernel(double x, double a) {
  x = std::fabs(x);
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// Coordinates far outside any sensible range (huge roi, NaN) would overflow the index math.
constexpr double kCoordinateLimit = 1e15;

AxisTable build_axis_table(const ResizeConfig& cfg, int64_t in_length, int64_t out_length,
                           double scale, double roi_start, double roi_end) {
  AxisTable t;
  t.in_length = in_length;
  t.out_length = out_length;
  t.outside.assign(static_cast<size_t>(out_length), 0);
  // Filter support: offsets [first_tap, first_tap + taps) around floor(x). Antialiasing widens
  // the filter by 1/scale when downsampling.
  const double filter_scale = cfg.antialias && scale < 1.0 ? scale : 1.0;
  int64_t first_tap = 0;
  switch (cfg.mode) {
    case InterpolationMode::kNearest: t.taps = 1; break;
    case InterpolationMode::kLinear:
      first_tap = static_cast<int64_t>(std::floor(-1.0 / filter_scale)) + 1;
      t.taps = static_cast<int>(2 - 2 * first_tap);
      break;
    case InterpolationMode::kCubic:
      first_tap = static_cast<int64_t>(std::floor(-2.0 / filter_scale)) + 1;
      t.taps = static_cast<int>(2 - 2 * first_tap);
      break;
  }
  const size_t entries = static_cast<size_t>(out_length) * static_cast<size_t>(t.taps);
  t.index.assign(entries, 0);
  if (cfg.mode != InterpolationMode::kNearest) t.weight.assign(entries, 0.0);
  const bool crop = cfg.coordinates == CoordinateMode::kTfCropAndResize;
  std::vector<double> w(static_cast<size_t>(t.taps));
  for (int64_t o = 0; o < out_length; ++o) {
    const double x = source_coordinate(cfg, static_cast<double>(o), scale, in_length, out_length,
                                       roi_start, roi_end);
    OPENBPU_CHECK(std::isfinite(x) && std::fabs(x) < kCoordinateLimit, "Resize: output coordinate ", o,
          " maps to input coordinate ", x, ", which is not a finite coordinate of the input");
    if (crop && (x < 0 || x > static_cast<double>(in_length - 1))) {
      t.outside[static_cast<size_t>(o)] = 1;
      t.has_outside = true;
      continue;
    }
    int64_t* idx = &t.index[static_cast<size_t>(o * t.taps)];
    if (cfg.mode == InterpolationMode::kNearest) {
      const int64_t i = nearest_index(cfg.rounding, x, scale < 1.0);
      idx[0] = std::clamp<int64_t>(i, 0, in_length - 1);
      continue;
    }
    const double base = std::floor(x);
    const double ratio = x - base;
    double sum = 0.0;
    for (int k = 0; k < t.taps; ++k) {
      const double offset = static_cast<double>(first_tap + k) - ratio;
      const double arg = filter_scale * offset;
      double v = cfg.mode == InterpolationMode::kLinear ? std::max(0.0, 1.0 - std::fabs(arg))
                                                        : cubic_kernel(arg, cfg.cubic_coeff_a);
      const int64_t pos = static_cast<int64_t>(base) + first_tap + k;
      if (cfg.exclude_outside && (pos < 0 || pos >= in_length)) v = 0.0;
      w[static_cast<size_t>(k)] = v;
      sum += v;
    }
    const bool normalize = cfg.antialias || cfg.exclude_outside;
    double* wt = &t.weight[static_cast<size_t>(o * t.taps)];
    for (int k = 0; k < t.taps; ++k) {
      const int64_t pos = static_cast<int64_t>(base) + first_tap + k;
      idx[k] = std::clamp<int64_t>(pos, 0, in_length - 1);
      wt[k] = normalize && sum != 0.0 ? w[static_cast<size_t>(k)] / sum : w[static_cast<size_t>(k)];
    }
  }
  return t;
}

// Accumulator type of the separable passes.
template <typename T>
using ResizeAccumulator =
    std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, Float16> ||
                           std::is_same_v<T, BFloat16>,
                       float, double>;

template <typename T, typename Acc>
T store_value(Acc v) {
  if constexpr (std::is_integral_v<T>) {
    const double r = std::nearbyint(static_cast<double>(v));
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (!(r >= lo)) return std::numeric_limits<T>::lowest();
    if (r >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  } else {
    return from_compute<T>(static_cast<ComputeType<T>>(v));
  }
}

// Resamples the middle axis of src [outer, in_length, inner] into dst [outer, out_length, inner].
template <typename Src, typename Dst, typename Acc>
void resample_axis(ThreadPool* pool, const Src* src, Dst* dst, int64_t outer, int64_t inner,
                   const AxisTable& t, Acc extrapolation) {
  if (inner == 1) {  // the innermost axis: whole rows per task, taps gathered per element
    const std::vector<Acc> weight(t.weight.begin(), t.weight.end());
    const int64_t min_rows = std::max<int64_t>(1, 8192 / std::max<int64_t>(t.out_length, 1));
    parallel_for(pool, outer, min_rows, [&](int64_t begin, int64_t end) {
      for (int64_t n = begin; n < end; ++n) {
        const Src* in = src + n * t.in_length;
        Dst* out = dst + n * t.out_length;
        for (int64_t o = 0; o < t.out_length; ++o) {
          if (t.outside[static_cast<size_t>(o)]) {
            out[o] = store_value<Dst, Acc>(extrapolation);
            continue;
          }
          const size_t at = static_cast<size_t>(o * t.taps);
          Acc sum(0);
          for (int k = 0; k < t.taps; ++k) {
            sum +=
                weight[at + size_t(k)] * static_cast<Acc>(to_compute(in[t.index[at + size_t(k)]]));
          }
          out[o] = store_value<Dst, Acc>(sum);
        }
      }
    });
    return;
  }
  const int64_t rows = outer * t.out_length;
  const int64_t min_rows = std::max<int64_t>(1, 8192 / std::max<int64_t>(inner, 1));
  parallel_for(pool, rows, min_rows, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(static_cast<size_t>(inner));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / t.out_length;
      const int64_t o = row % t.out_length;
      Dst* out = dst + row * inner;
      if (t.outside[static_cast<size_t>(o)]) {
        for (int64_t j = 0; j < inner; ++j) out[j] = store_value<Dst, Acc>(extrapolation);
        continue;
      }
      std::fill(acc.begin(), acc.end(), Acc(0));
      for (int k = 0; k < t.taps; ++k) {
        const size_t at = static_cast<size_t>(o * t.taps + k);
        const Acc w = static_cast<Acc>(t.weight[at]);
        if (w == Acc(0)) continue;
        const Src* in = src + (n * t.in_length + t.index[at]) * inner;
        for (int64_t j = 0; j < inner; ++j) {
          acc[static_cast<size_t>(j)] += w * static_cast<Acc>(to_compute(in[j]));
        }
      }
      for (int64_t j = 0; j < inner; ++j)
        out[j] = store_value<Dst, Acc>(acc[static_cast<size_t>(j)]);
    }
  });
}

// Linear / cubic: one pass per non-identity axis, innermost first.
template <typename T>
void resize_separable(ThreadPool* pool, const Tensor& x, Tensor& y,
                      const std::vector<AxisTable>& tables, double extrapolation) {
  using Acc = ResizeAccumulator<T>;
  const int64_t rank = x.rank();
  std::vector<int64_t> passes;
  for (int64_t a = rank - 1; a >= 0; --a) {
    if (!tables[static_cast<size_t>(a)].is_identity()) passes.push_back(a);
  }
  const T* in = x.data<T>();
  T* out = y.data<T>();
  if (passes.empty()) {
    std::copy(in, in + x.element_count(), out);
    return;
  }
  Shape current = x.shape();
  std::vector<Acc> buffer_a, buffer_b;
  const Acc* acc_in = nullptr;
  for (size_t p = 0; p < passes.size(); ++p) {
    const int64_t axis = passes[p];
    const AxisTable& t = tables[static_cast<size_t>(axis)];
    const int64_t outer = dims_product(current, 0, static_cast<size_t>(axis));
    const int64_t inner = dims_product(current, static_cast<size_t>(axis) + 1, current.size());
    current[static_cast<size_t>(axis)] = t.out_length;
    const bool first = p == 0;
    const bool last = p + 1 == passes.size();
    const Acc extrap = static_cast<Acc>(extrapolation);
    if (last) {
      if (first) {
        resample_axis<T, T, Acc>(pool, in, out, outer, inner, t, extrap);
      } else {
        resample_axis<Acc, T, Acc>(pool, acc_in, out, outer, inner, t, extrap);
      }
    } else {
      std::vector<Acc>& target = (p % 2 == 0) ? buffer_a : buffer_b;
      target.assign(static_cast<size_t>(shape_element_count(current)), Acc(0));
      if (first) {
        resample_axis<T, Acc, Acc>(pool, in, target.data(), outer, inner, t, extrap);
      } else {
        resample_axis<Acc, Acc, Acc>(pool, acc_in, target.data(), outer, inner, t, extrap);
      }
      acc_in = target.data();
    }
  }
}

// Nearest: a gather through per-axis index tables, parallel over output rows.
template <typename T>
void resize_nearest(ThreadPool* pool, const Tensor& x, Tensor& y,
                    const std::vector<AxisTable>& tables, double extrapolation) {
  const int64_t rank = x.rank();
  const std::vector<int64_t> in_strides = contiguous_strides(x.shape());
  // Per-axis element offsets into the input, -1 where the output extrapolates.
  std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(rank));
  for (int64_t a = 0; a < rank; ++a) {
    const AxisTable& t = tables[static_cast<size_t>(a)];
    auto& off = offsets[static_cast<size_t>(a)];
    off.resize(static_cast<size_t>(t.out_length));
    for (int64_t o = 0; o < t.out_length; ++o) {
      off[static_cast<size_t>(o)] = t.outside[static_cast<size_t>(o)]
                                        ? -1
                                        : t.index[static_cast<size_t>(o)] * in_strides[size_t(a)];
    }
  }
  const T* in = x.data<T>();
  T* out = y.data<T>();
  const T fill = store_value<T, double>(extrapolation);
  const Shape& out_shape = y.shape();
  const int64_t width = out_shape.back();
  const int64_t rows = y.element_count() / std::max<int64_t>(width, 1);
  const auto& last = offsets.back();
  parallel_for(pool, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(width, 1)),
               [&](int64_t begin, int64_t end) {
                 // An output row reading the same input row as the one before it (upsampling
                 // along H) is a copy of it.
                 int64_t previous_base = -1;
                 for (int64_t row = begin; row < end; ++row) {
                   int64_t rest = row;
                   int64_t base = 0;
                   bool outside = false;
                   for (int64_t a = rank - 2; a >= 0; --a) {
                     const int64_t dim = out_shape[static_cast<size_t>(a)];
                     const int64_t c = rest % dim;
                     rest /= dim;
                     const int64_t off = offsets[static_cast<size_t>(a)][static_cast<size_t>(c)];
                     if (off < 0) outside = true;
                     base += off;
                   }
                   T* dst = out + row * width;
                   if (outside) {
                     std::fill(dst, dst + width, fill);
                     previous_base = -1;
                     continue;
                   }
                   if (base == previous_base) {
                     std::copy(dst - width, dst, dst);
                     continue;
                   }
                   const T* src = in + base;
                   for (int64_t j = 0; j < width; ++j) {
                     const int64_t off = last[static_cast<size_t>(j)];
                     dst[j] = off < 0 ? fill : src[off];
                   }
                   previous_base = base;
                 }
               });
}

// Resize and Upsample share this kernel; the constructor maps the op revision onto a config and
// the positions of the roi / scales / sizes inputs.
class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(const NodeInfo& node, bool is_upsample) : op_(node.op_type) {
    const auto& attrs = node.attrs;
    const bool legacy = is_upsample || node.opset < 11;
    cfg_.mode = parse_mode(op_, attrs.get_string("mode", "nearest"), !legacy);
    if (legacy) {
      for (const char* name :
           {"coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
            "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"}) {
        OPENBPU_CHECK(!attrs.has(name), op_, "-", node.opset, " has no attribute '", name, "'");
      }
      cfg_.coordinates = CoordinateMode::kAsymmetric;
      cfg_.rounding = NearestRounding::kLegacy;
      if (is_upsample) {
        if (node.opset < 9) {
          OPENBPU_CHECK(attrs.has("scales"), "Upsample-7 requires the 'scales' attribute");
          const auto s = attrs.get_floats("scales");
          scales_attr_.assign(s.begin(), s.end());
        } else {
          OPENBPU_CHECK(!attrs.has("scales"), "Upsample-9 takes scales as an input, not an attribute");
          scales_input_ = 1;
        }
      } else {
        scales_input_ = 1;
      }
      return;
    }
    cfg_.coordinates =
        parse_coordinate_mode(attrs.get_string("coordinate_transformation_mode", "half_pixel"));
    cfg_.rounding = parse_nearest_mode(attrs.get_string("nearest_mode", "round_prefer_floor"));
    cfg_.cubic_coeff_a = attrs.get_float("cubic_coeff_a", -0.75f);
    cfg_.exclude_outside = attrs.get_int("exclude_outside", 0) != 0;
    cfg_.extrapolation_value = attrs.get_float("extrapolation_value", 0.0f);
    cfg_.antialias = attrs.get_int("antialias", 0) != 0;
    cfg_.axes = attrs.get_ints("axes", {});
    cfg_.aspect_policy =
        parse_aspect_policy(attrs.get_string("keep_aspect_ratio_policy", "stretch"));
    roi_input_ = 1;
    scales_input_ = 2;
    sizes_input_ = 3;
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    OPENBPU_CHECK(rank >= 1, op_, ": input X must have rank >= 1, got a scalar");
    std::vector<int64_t> axes(static_cast<size_t>(rank));
    for (int64_t a = 0; a < rank; ++a) axes[static_cast<size_t>(a)] = a;
    if (!cfg_.axes.empty()) axes = normalize_axes(cfg_.axes, rank, str_cat(op_, ": axes"));
    const size_t naxes = axes.size();

    const Tensor* scales = present(ctx, scales_input_);
    const Tensor* sizes = present(ctx, sizes_input_);
    std::vector<double> scale(static_cast<size_t>(rank), 1.0);
    Shape out_shape = x.shape();
    if (!scales_attr_.empty() || scales != nullptr) {
      OPENBPU_CHECK(sizes == nullptr, op_, ": only one of 'scales' and 'sizes' may be given");
      std::vector<double> values = scales_attr_;
      if (scales != nullptr) {
        OPENBPU_CHECK(dtype_is_float(scales->dtype()), op_, ": scales must be a float tensor, got ",
              scales->describe());
        OPENBPU_CHECK(scales->rank() == 1, op_, ": scales must be 1-D, got ", scales->describe());
        for (int64_t i = 0; i < scales->element_count(); ++i) values.push_back(scales->float_at(i));
      }
      OPENBPU_CHECK(values.size() == naxes, op_, ": scales has ", values.size(),
            " values but must have one per resized axis (", naxes, ")");
      for (size_t i = 0; i < naxes; ++i) {
        const double s = values[i];
        OPENBPU_CHECK(std::isfinite(s) && s > 0, op_, ": scales must be positive and finite, got ", s,
              " for axis ", axes[i]);
        const size_t a = static_cast<size_t>(axes[i]);
        const double length = std::floor(static_cast<double>(x.dim(axes[i])) * s);
        OPENBPU_CHECK(length < 9e18, op_, ": scale ", s, " makes axis ", axes[i], " too long");
        scale[a] = s;
        out_shape[a] = static_cast<int64_t>(length);
      }
    } else {
      OPENBPU_CHECK(sizes != nullptr, op_, ": one of 'scales' and 'sizes' must be given");
      OPENBPU_CHECK(sizes->dtype() == DataType::kInt64, op_, ": sizes must be int64, got ",
            sizes->describe());
      OPENBPU_CHECK(sizes->rank() == 1 && sizes->element_count() == static_cast<int64_t>(naxes), op_,
            ": sizes must be 1-D with one value per resized axis (", naxes, "), got ",
            sizes->describe());
      const std::vector<int64_t> values = sizes->to_int64_vector();
      for (size_t i = 0; i < naxes; ++i) {
        OPENBPU_CHECK(values[i] >= 0, op_, ": sizes must be >= 0, got ", values[i]);
        OPENBPU_CHECK(values[i] == 0 || x.dim(axes[i]) > 0, op_, ": cannot resize empty axis ", axes[i],
              " to length ", values[i]);
      }
      if (cfg_.aspect_policy == AspectRatioPolicy::kStretch) {
        for (size_t i = 0; i < naxes; ++i) {
          const size_t a = static_cast<size_t>(axes[i]);
          out_shape[a] = values[i];
          if (x.dim(axes[i]) > 0) {
            scale[a] = static_cast<double>(values[i]) / static_cast<double>(x.dim(axes[i]));
          }
        }
      } else {
        const bool not_larger = cfg_.aspect_policy == AspectRatioPolicy::kNotLarger;
        double common = not_larger ? std::numeric_limits<double>::infinity() : 0.0;
        for (size_t i = 0; i < naxes; ++i) {
          if (x.dim(axes[i]) == 0) continue;
          const double s = static_cast<double>(values[i]) / static_cast<double>(x.dim(axes[i]));
          common = not_larger ? std::min(common, s) : std::max(common, s);
        }
        if (!std::isfinite(common)) common = 1.0;
        for (size_t i = 0; i < naxes; ++i) {
          const size_t a = static_cast<size_t>(axes[i]);
          scale[a] = common;
          out_shape[a] =
              static_cast<int64_t>(std::floor(common * static_cast<double>(x.dim(axes[i])) + 0.5));
        }
      }
    }

    // Region of interest: starts then ends of the resized axes (tf_crop_and_resize only).
    std::vector<double> roi_start(static_cast<size_t>(rank), 0.0);
    std::vector<double> roi_end(static_cast<size_t>(rank), 1.0);
    const Tensor* roi = present(ctx, roi_input_);
    if (cfg_.coordinates == CoordinateMode::kTfCropAndResize && roi != nullptr) {
      OPENBPU_CHECK(dtype_is_float(roi->dtype()), op_, ": roi must be a float tensor, got ",
            roi->describe());
      OPENBPU_CHECK(roi->element_count() == static_cast<int64_t>(2 * naxes), op_, ": roi must hold ",
            2 * naxes, " values (starts and ends of the resized axes), got ", roi->describe());
      for (size_t i = 0; i < naxes; ++i) {
        const size_t a = static_cast<size_t>(axes[i]);
        roi_start[a] = roi->float_at(static_cast<int64_t>(i));
        roi_end[a] = roi->float_at(static_cast<int64_t>(i + naxes));
      }
    }

    Tensor& y = ctx.allocate_output_for_overwrite(0, x.dtype(), out_shape);
    if (y.element_count() == 0) return;
    std::vector<AxisTable> tables;
    tables.reserve(static_cast<size_t>(rank));
    for (int64_t a = 0; a < rank; ++a) {
      const size_t i = static_cast<size_t>(a);
      tables.push_back(
          build_axis_table(cfg_, x.dim(a), out_shape[i], scale[i], roi_start[i], roi_end[i]));
    }
    if (cfg_.mode == InterpolationMode::kNearest) {
      dispatch<AllTypes>(x.dtype(), op_, [&]<typename T>() {
        resize_nearest<T>(ctx.thread_pool(), x, y, tables, cfg_.extrapolation_value);
      });
    } else {
      dispatch<NumericTypes>(x.dtype(), op_, [&]<typename T>() {
        resize_separable<T>(ctx.thread_pool(), x, y, tables, cfg_.extrapolation_value);
      });
    }
  }

 private:
  // Input i if listed and not an empty tensor (opset 11 models pass empty roi / scales).
  static const Tensor* present(const KernelContext& ctx, int i) {
    if (i < 0) return nullptr;
    const Tensor* t = ctx.optional_input(i);
    return t != nullptr && t->element_count() > 0 ? t : nullptr;
  }

  std::string op_;
  ResizeConfig cfg_;
  std::vector<double> scales_attr_;
  int roi_input_ = -1;
  int scales_input_ = -1;
  int sizes_input_ = -1;
};

std::unique_ptr<Kernel> make_resize(const NodeInfo& node) {
  return std::make_unique<ResizeKernel>(node, false);
}

std::unique_ptr<Kernel> make_upsample(const NodeInfo& node) {
  return std::make_unique<ResizeKernel>(node, true);
}

}  // namespace

void register_resize_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"",
                  "Resize",
                  10,
                  {{"mode", AttrKind::kString},
                   {"coordinate_transformation_mode", AttrKind::kString},
                   {"nearest_mode", AttrKind::kString},
                   {"cubic_coeff_a", AttrKind::kFloat},
                   {"exclude_outside", AttrKind::kInt},
                   {"extrapolation_value", AttrKind::kFloat},
                   {"antialias", AttrKind::kInt},
                   {"axes", AttrKind::kInts},
                   {"keep_aspect_ratio_policy", AttrKind::kString}},
                  &make_resize});
  defs.push_back({"",
                  "Upsample",
                  7,
                  {{"mode", AttrKind::kString}, {"scales", AttrKind::kFloats}},
                  &make_upsample});
}

}  // namespace openbpu::kernels
