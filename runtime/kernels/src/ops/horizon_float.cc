// Horizon-domain float-side and border operators (docs/quantized_ops.md): HzPreprocess (input
// colour conversion and normalisation), HzCalibration (fake quantization), Quantize and
// Dequantize. Quantization is the one definition in simulator/integer_arithmetic.h.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/simulator/integer_arithmetic.h"

namespace openbpu::kernels {

namespace {

namespace sim = openbpu::simulator;

// Elements per task of elementwise loops.
constexpr int64_t kElementChunk = int64_t{1} << 14;

// ---------------------------------------------------------------------------------------------
// HzPreprocess

// The colour space of the runtime data (after the intermediate int8 conversion) and of training.
enum class ColourSpace { kYuv444, kRgb, kBgr, kGray, kFeaturemap };

// input_type_rt → the intermediate type's colour space (nv12 and yuv444 become yuv444_128).
ColourSpace parse_runtime_type(const std::string& type) {
  if (type == "nv12" || type == "yuv444") return ColourSpace::kYuv444;
  if (type == "rgb") return ColourSpace::kRgb;
  if (type == "bgr") return ColourSpace::kBgr;
  if (type == "gray") return ColourSpace::kGray;
  if (type == "featuremap") return ColourSpace::kFeaturemap;
  fail("HzPreprocess: input_type_rt must be nv12, yuv444, rgb, bgr, gray or featuremap, got \"",
       type, "\"");
}

ColourSpace parse_train_type(const std::string& type) {
  if (type == "yuv444") return ColourSpace::kYuv444;
  if (type == "rgb") return ColourSpace::kRgb;
  if (type == "bgr") return ColourSpace::kBgr;
  if (type == "gray") return ColourSpace::kGray;
  if (type == "featuremap") return ColourSpace::kFeaturemap;
  fail("HzPreprocess: input_type_train must be rgb, bgr, yuv444, gray or featuremap, got \"", type,
       "\"");
}

// The conversions the toolchain allows: yuv444 ← nv12/yuv444; rgb, bgr ← nv12/yuv444/rgb/bgr;
// gray ← gray; featuremap ← featuremap.
bool conversion_allowed(ColourSpace from, ColourSpace to) {
  switch (to) {
    case ColourSpace::kYuv444: return from == ColourSpace::kYuv444;
    case ColourSpace::kRgb:
    case ColourSpace::kBgr:
      return from == ColourSpace::kYuv444 || from == ColourSpace::kRgb || from == ColourSpace::kBgr;
    case ColourSpace::kGray: return from == ColourSpace::kGray;
    case ColourSpace::kFeaturemap: return from == ColourSpace::kFeaturemap;
  }
  return false;
}

class PreprocessKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzPreprocess";

  explicit PreprocessKernel(const NodeInfo& node) {
    const AttributeMap& attrs = node.attrs;
    const std::string rt = attrs.get_string("input_type_rt");
    const std::string train = attrs.get_string("input_type_train");
    from_ = parse_runtime_type(rt);
    to_ = parse_train_type(train);
    OPENBPU_CHECK(conversion_allowed(from_, to_), kOp, ": input_type_train \"", train,
                  "\" cannot be produced from input_type_rt \"", rt,
                  "\" (allowed: yuv444 <- nv12/yuv444; rgb, bgr <- nv12/yuv444/rgb/bgr; gray <- "
                  "gray; featuremap <- featuremap)");
    const std::string layout = attrs.get_string("input_layout", "NCHW");
    OPENBPU_CHECK(layout == "NCHW" || layout == "NHWC", kOp,
                  ": input_layout must be \"NCHW\" or \"NHWC\", got \"", layout, "\"");
    channels_last_ = layout == "NHWC";
    const std::string range = attrs.get_string("color_range", "full");
    OPENBPU_CHECK(range == "full" || range == "video", kOp,
                  ": color_range must be \"full\" or \"video\", got \"", range, "\"");
    video_range_ = range == "video";
    OPENBPU_CHECK(!video_range_ || from_ == ColourSpace::kYuv444, kOp,
                  ": color_range \"video\" (bt601_video) applies to nv12/yuv444 input only, "
                  "input_type_rt is \"",
                  rt, "\"");
    mean_ = attrs.get_floats("mean", {});
    scale_ = attrs.get_floats("scale", {});
    if (from_ != ColourSpace::kFeaturemap) {
      channels_ = from_ == ColourSpace::kGray ? 1 : 3;
      check_per_channel("mean", mean_, channels_);
      check_per_channel("scale", scale_, channels_);
    }
    for (float v : mean_)
      OPENBPU_CHECK(std::isfinite(v), kOp, ": mean values must be finite, got ", v);
    for (float v : scale_)
      OPENBPU_CHECK(std::isfinite(v), kOp, ": scale values must be finite, got ", v);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.allocate_output(0, DataType::kFloat32, x.shape());
    float* py = y.data<float>();
    if (from_ == ColourSpace::kFeaturemap) {
      run_featuremap(ctx, x, py);
      return;
    }
    OPENBPU_CHECK(x.dtype() == DataType::kInt8, kOp,
                  ": an image input (intermediate type *_128: pixel - 128) must be int8, got ",
                  x.describe());
    OPENBPU_CHECK(x.rank() == 4, kOp, ": an image input must have rank 4, got ", x.describe());
    const int64_t channel_axis = channels_last_ ? 3 : 1;
    OPENBPU_CHECK(x.dim(channel_axis) == channels_, kOp, ": x ", x.describe(), " must have ",
                  channels_, " channels on axis ", channel_axis, " (",
                  channels_last_ ? "NHWC" : "NCHW", ")");
    // Pixel p of image n, channel c is at n * C * HW + (NCHW ? c * HW + p : p * C + c).
    const int64_t batch = x.dim(0);
    const int64_t pixels = channels_last_ ? x.dim(1) * x.dim(2) : x.dim(2) * x.dim(3);
    const int64_t channel_stride = channels_last_ ? 1 : pixels;
    const int64_t pixel_stride = channels_last_ ? channels_ : 1;
    const int8_t* px = x.data<int8_t>();
    parallel_for(ctx.thread_pool(), batch * pixels, kElementChunk, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t base = (i / pixels) * channels_ * pixels + (i % pixels) * pixel_stride;
        std::array<double, 3> v{};
        for (int64_t c = 0; c < channels_; ++c)
          v[size_t(c)] = px[base + c * channel_stride] + 128.0;
        v = convert(v);
        for (int64_t c = 0; c < channels_; ++c) {
          py[base + c * channel_stride] = static_cast<float>(normalise(v[size_t(c)], c));
        }
      }
    });
  }

 private:
  static void check_per_channel(std::string_view name, const std::vector<float>& values,
                                int64_t channels) {
    OPENBPU_CHECK(
        values.empty() || values.size() == 1 || static_cast<int64_t>(values.size()) == channels,
        kOp, ": ", name, " must have no value, one value or one per channel (", channels, "), got ",
        values.size());
  }

  double normalise(double v, int64_t c) const {
    const double mean = mean_.empty() ? 0.0 : mean_[mean_.size() == 1 ? 0 : size_t(c)];
    const double scale = scale_.empty() ? 1.0 : scale_[scale_.size() == 1 ? 0 : size_t(c)];
    return (v - mean) * scale;
  }

  // Colour conversion of one pixel (values 0..255) from the intermediate type to training's.
  std::array<double, 3> convert(std::array<double, 3> v) const {
    if (from_ == ColourSpace::kYuv444) {
      if (video_range_) {
        // BT.601 video range [16, 235] / [16, 240] to full range.
        v[0] = (v[0] - 16.0) * 255.0 / 219.0;
        v[1] = (v[1] - 128.0) * 255.0 / 224.0 + 128.0;
        v[2] = (v[2] - 128.0) * 255.0 / 224.0 + 128.0;
      }
      if (to_ == ColourSpace::kYuv444) return v;
      const double yy = v[0], u = v[1] - 128.0, vv = v[2] - 128.0;
      const double r = yy + 1.402 * vv;
      const double g = yy - 0.344136 * u - 0.714136 * vv;
      const double b = yy + 1.772 * u;
      return to_ == ColourSpace::kRgb ? std::array<double, 3>{r, g, b}
                                      : std::array<double, 3>{b, g, r};
    }
    const bool swap = (from_ == ColourSpace::kRgb && to_ == ColourSpace::kBgr) ||
                      (from_ == ColourSpace::kBgr && to_ == ColourSpace::kRgb);
    if (swap) std::swap(v[0], v[2]);
    return v;
  }

  // featuremap: y = (x - mean[c]) * scale[c] on the float input (no +128), channel axis 1 (NCHW)
  // or last (NHWC).
  void run_featuremap(KernelContext& ctx, const Tensor& x, float* py) const {
    OPENBPU_CHECK(x.dtype() == DataType::kFloat32, kOp,
                  ": a featuremap input must be float32, got ", x.describe());
    int64_t channels = 1, inner = 1;
    if (mean_.size() > 1 || scale_.size() > 1) {
      OPENBPU_CHECK(x.rank() >= 2, kOp, ": per-channel mean/scale need a channel axis, x is ",
                    x.describe());
      const int64_t axis = channels_last_ ? x.rank() - 1 : 1;
      channels = x.dim(axis);
      inner = dims_product(x.shape(), size_t(axis) + 1, x.shape().size());
      check_per_channel("mean", mean_, channels);
      check_per_channel("scale", scale_, channels);
    }
    const float* px = x.data<float>();
    parallel_for(ctx.thread_pool(), x.element_count(), kElementChunk,
                 [&](int64_t begin, int64_t end) {
                   for (int64_t i = begin; i < end; ++i) {
                     const int64_t c = (i / inner) % channels;
                     py[i] = static_cast<float>(normalise(px[i], c));
                   }
                 });
  }

  ColourSpace from_ = ColourSpace::kFeaturemap;
  ColourSpace to_ = ColourSpace::kFeaturemap;
  bool channels_last_ = false;
  bool video_range_ = false;
  int64_t channels_ = 0;
  std::vector<float> mean_, scale_;
};

// ---------------------------------------------------------------------------------------------
// Per-channel parameters along an axis

// Which parameter applies to element i: (i / inner) % channels.
struct ChannelIndex {
  int64_t channels = 1;
  int64_t inner = 1;
  size_t of(int64_t i) const { return size_t(channels == 1 ? 0 : (i / inner) % channels); }
  // The end of element i's run of elements of the same channel, at most `end` (one division per
  // run, not per element).
  int64_t run_end(int64_t i, int64_t end) const {
    return channels == 1 ? end : std::min(end, (i / inner + 1) * inner);
  }
};

// Resolves `count` per-channel values against axis `axis` of x (count 1: per tensor).
ChannelIndex channel_index(std::string_view op, std::string_view what, const Tensor& x,
                           int64_t axis, size_t count) {
  ChannelIndex index;
  if (count == 1) return index;
  const int64_t a = normalize_axis(axis, x.rank(), str_cat(op, ": axis"));
  OPENBPU_CHECK(static_cast<int64_t>(count) == x.dim(a), op, ": ", what, " has ", count,
                " values but axis ", a, " of ", x.describe(), " has ", x.dim(a),
                " entries (one value, or one per entry)");
  index.channels = x.dim(a);
  index.inner = dims_product(x.shape(), size_t(a) + 1, x.shape().size());
  return index;
}

int64_t read_bits(std::string_view op, const AttributeMap& attrs) {
  const int64_t bits = attrs.get_int("bits", 8);
  OPENBPU_CHECK(bits == 8 || bits == 16, op, ": bits must be 8 or 16, got ", bits);
  return bits;
}

// ---------------------------------------------------------------------------------------------
// HzCalibration

class CalibrationKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzCalibration";

  explicit CalibrationKernel(const NodeInfo& node) {
    const AttributeMap& attrs = node.attrs;
    const std::string kind = attrs.get_string("kind", "activation");
    OPENBPU_CHECK(kind == "activation" || kind == "weight", kOp,
                  ": kind must be \"activation\" or \"weight\", got \"", kind, "\"");
    bits_ = static_cast<int>(read_bits(kOp, attrs));
    axis_ = attrs.get_int("axis", kind == "weight" ? 0 : 1);
    const int64_t enabled = attrs.get_int("enabled", 1);
    OPENBPU_CHECK(enabled == 0 || enabled == 1, kOp, ": enabled must be 0 or 1, got ", enabled);
    enabled_ = enabled == 1;
    const std::vector<float> thresholds = attrs.get_floats("thresholds");
    OPENBPU_CHECK(!thresholds.empty(), kOp, ": thresholds must list at least one value");
    for (float t : thresholds) {
      OPENBPU_CHECK(std::isfinite(t) && t >= 0.0f, kOp,
                    ": thresholds must be finite and >= 0, got ", t);
      scales_.push_back(sim::symmetric_scale(t, bits_));
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    OPENBPU_CHECK(x.dtype() == DataType::kFloat32, kOp, ": x must be float32, got ", x.describe());
    if (!enabled_) {
      ctx.set_output(0, x);
      return;
    }
    const ChannelIndex index = channel_index(kOp, "thresholds", x, axis_, scales_.size());
    Tensor& y = ctx.allocate_output_for_overwrite(0, DataType::kFloat32, x.shape(), 0);
    const float* px = x.data<float>();
    float* py = y.data<float>();
    parallel_for(ctx.thread_pool(), x.element_count(), kElementChunk,
                 [&](int64_t begin, int64_t end) {
                   for (int64_t i = begin; i < end;) {
                     const int64_t run = index.run_end(i, end);
                     sim::fake_quantize(px + i, run - i, scales_[index.of(i)], bits_, py + i);
                     i = run;
                   }
                 });
  }

 private:
  int bits_ = 8;
  int64_t axis_ = 1;
  bool enabled_ = true;
  std::vector<float> scales_;
};

// ---------------------------------------------------------------------------------------------
// Quantize / Dequantize

bool valid_scale(float s) {
  return std::isfinite(s) && s > 0.0f;
}

class QuantizeKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "Quantize";

  explicit QuantizeKernel(const NodeInfo& node)
      : bits_(read_bits(kOp, node.attrs)), scale_(node.attrs.get_float("scale")) {
    OPENBPU_CHECK(valid_scale(scale_), kOp, ": scale must be finite and > 0, got ", scale_);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    OPENBPU_CHECK(x.dtype() == DataType::kFloat32, kOp, ": x must be float32, got ", x.describe());
    const float* px = x.data<float>();
    const DataType out = bits_ == 8 ? DataType::kInt8 : DataType::kInt16;
    Tensor& y = ctx.allocate_output(0, out, x.shape());
    dispatch<TypeList<int8_t, int16_t>>(out, kOp, [&]<typename Q>() {
      Q* py = y.data<Q>();
      parallel_for(ctx.thread_pool(), x.element_count(), kElementChunk,
                   [&](int64_t begin, int64_t end) {
                     if constexpr (std::is_same_v<Q, int8_t>) {
                       sim::quantize_int8(px + begin, end - begin, scale_, py + begin);
                     } else {
                       sim::quantize_int16(px + begin, end - begin, scale_, py + begin);
                     }
                   });
    });
  }

 private:
  int64_t bits_;
  float scale_;
};

class DequantizeKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "Dequantize";

  explicit DequantizeKernel(const NodeInfo& node)
      : scales_(node.attrs.get_floats("scales")), axis_(node.attrs.get_int("axis", 1)) {
    OPENBPU_CHECK(!scales_.empty(), kOp, ": scales must list at least one value");
    for (float s : scales_) {
      OPENBPU_CHECK(valid_scale(s), kOp, ": scales must be finite and > 0, got ", s);
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const ChannelIndex index = channel_index(kOp, "scales", x, axis_, scales_.size());
    Tensor& y = ctx.allocate_output(0, DataType::kFloat32, x.shape());
    float* py = y.data<float>();
    dispatch<TypeList<int8_t, int16_t, int32_t>>(x.dtype(), kOp, [&]<typename Q>() {
      const Q* px = x.data<Q>();
      parallel_for(ctx.thread_pool(), x.element_count(), kElementChunk,
                   [&](int64_t begin, int64_t end) {
                     for (int64_t i = begin; i < end;) {
                       const float s = scales_[index.of(i)];
                       for (const int64_t run = index.run_end(i, end); i < run; ++i)
                         py[i] = sim::dequantize(px[i], s);
                     }
                   });
    });
  }

 private:
  std::vector<float> scales_;
  int64_t axis_;
};

}  // namespace

void register_horizon_float_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"horizon",
                  "HzPreprocess",
                  1,
                  {{"input_type_rt", AttrKind::kString, true},
                   {"input_type_train", AttrKind::kString, true},
                   {"input_layout", AttrKind::kString},
                   {"mean", AttrKind::kFloats},
                   {"scale", AttrKind::kFloats},
                   {"color_range", AttrKind::kString}},
                  &make_kernel<PreprocessKernel>});
  defs.push_back({"horizon",
                  "HzCalibration",
                  1,
                  {{"kind", AttrKind::kString},
                   {"bits", AttrKind::kInt},
                   {"thresholds", AttrKind::kFloats, true},
                   {"axis", AttrKind::kInt},
                   {"method", AttrKind::kString},
                   {"enabled", AttrKind::kInt}},
                  &make_kernel<CalibrationKernel>});
  defs.push_back({"horizon",
                  "Quantize",
                  1,
                  {{"bits", AttrKind::kInt}, {"scale", AttrKind::kFloat, true}},
                  &make_kernel<QuantizeKernel>});
  defs.push_back({"horizon",
                  "Dequantize",
                  1,
                  {{"scales", AttrKind::kFloats, true}, {"axis", AttrKind::kInt}},
                  &make_kernel<DequantizeKernel>});
}

}  // namespace openbpu::kernels
