// Sampling and detection operators: GridSample, RoiAlign, NonMaxSuppression.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "families.h"
#include "openbpu/kernels/dispatch.h"

namespace openbpu::kernels {

namespace {

// ---------------------------------------------------------------------------------------------
// GridSample (opset 16): samples X [N, C, H, W] at the normalised (x, y) positions of
// grid [N, H_out, W_out, 2]. Semantics follow PyTorch's grid_sample, which the ONNX operator
// mirrors.

enum class GridMode { kBilinear, kNearest, kBicubic };
enum class GridPadding { kZeros, kBorder, kReflection };

// Coordinates beyond this magnitude are far outside any tensor; they are clamped before any
// conversion to an integer so that the index math cannot overflow.
constexpr double kFarOutside = 1e12;

// Reflects `x` into [low, high] (given doubled, as PyTorch does) by folding at both ends.
double reflect_coordinate(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0.0;
  const double low = twice_low / 2;
  const double span = (twice_high - twice_low) / 2;
  x = std::fabs(x - low);
  const double extra = std::fmod(x, span);
  const double flips = std::floor(x / span);
  return std::fmod(flips, 2.0) == 0.0 ? extra + low : span - extra + low;
}

class GridSampleKernel final : public Kernel {
 public:
  explicit GridSampleKernel(const NodeInfo& node) {
    const auto& attrs = node.attrs;
    align_corners_ = attrs.get_int("align_corners", 0) != 0;
    const std::string mode = attrs.get_string("mode", "bilinear");
    // "linear" / "cubic" are the opset-20 names of the same 2-D modes.
    if (mode == "bilinear" || mode == "linear") {
      mode_ = GridMode::kBilinear;
    } else if (mode == "nearest") {
      mode_ = GridMode::kNearest;
    } else if (mode == "bicubic" || mode == "cubic") {
      mode_ = GridMode::kBicubic;
    } else {
      fail("GridSample: mode must be bilinear, nearest or bicubic, got '", mode, "'");
    }
    const std::string padding = attrs.get_string("padding_mode", "zeros");
    if (padding == "zeros") {
      padding_ = GridPadding::kZeros;
    } else if (padding == "border") {
      padding_ = GridPadding::kBorder;
    } else if (padding == "reflection") {
      padding_ = GridPadding::kReflection;
    } else {
      fail("GridSample: padding_mode must be zeros, border or reflection, got '", padding, "'");
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    OPENBPU_CHECK(x.rank() == 4, "GridSample: X must be 4-D [N, C, H, W], got ", x.describe());
    OPENBPU_CHECK(grid.rank() == 4 && grid.dim(3) == 2,
          "GridSample: grid must be 4-D [N, H_out, W_out, 2], got ", grid.describe());
    OPENBPU_CHECK(grid.dim(0) == x.dim(0), "GridSample: grid batch ", grid.dim(0), " must equal X batch ",
          x.dim(0));
    OPENBPU_CHECK(dtype_is_float(grid.dtype()), "GridSample: grid must be a float tensor, got ",
          grid.describe());
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
    const int64_t oh = grid.dim(1), ow = grid.dim(2);
    Tensor& y = ctx.allocate_output(0, x.dtype(), {n, c, oh, ow});
    if (y.element_count() == 0 || h == 0 || w == 0) return;  // an empty image samples zeros
    dispatch<FloatTypes>(x.dtype(), "GridSample", [&]<typename T>() {
      const T* in = x.data<T>();
      T* out = y.data<T>();
      const int64_t points = oh * ow;
      parallel_for(ctx.thread_pool(), n * points, 256, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const int64_t b = p / points;
          const int64_t at = p % points;
          const double gx = grid.float_at(p * 2);
          const double gy = grid.float_at(p * 2 + 1);
          for (int64_t ch = 0; ch < c; ++ch) {
            const T* plane = in + (b * c + ch) * h * w;
            out[(b * c + ch) * points + at] =
                from_compute<T>(static_cast<ComputeType<T>>(sample(plane, h, w, gx, gy)));
          }
        }
      });
    });
  }

 private:
  double unnormalize(double g, int64_t size) const {
    const double s = static_cast<double>(size);
    return align_corners_ ? (g + 1) / 2 * (s - 1) : ((g + 1) * s - 1) / 2;
  }

  // Applies the padding mode to a coordinate (bilinear / nearest source position, bicubic taps).
  double pad_coordinate(double v, int64_t size) const {
    const double s = static_cast<double>(size);
    if (padding_ == GridPadding::kBorder) return std::clamp(v, 0.0, s - 1);
    if (padding_ == GridPadding::kReflection) {
      v = align_corners_ ? reflect_coordinate(v, 0, 2 * (s - 1))
                         : reflect_coordinate(v, -1, 2 * s - 1);
      return std::clamp(v, 0.0, s - 1);
    }
    return v;
  }

  template <typename T>
  static double pixel(const T* plane, int64_t h, int64_t w, double yy, double xx) {
    if (!(yy >= 0 && yy <= static_cast<double>(h - 1) && xx >= 0 &&
          xx <= static_cast<double>(w - 1))) {
      return 0.0;  // outside (or NaN): zero padding
    }
    const int64_t iy = static_cast<int64_t>(yy), ix = static_cast<int64_t>(xx);
    return static_cast<double>(to_compute(plane[iy * w + ix]));
  }

  template <typename T>
  double sample(const T* plane, int64_t h, int64_t w, double gx, double gy) const {
    double fx = std::clamp(unnormalize(gx, w), -kFarOutside, kFarOutside);
    double fy = std::clamp(unnormalize(gy, h), -kFarOutside, kFarOutside);
    if (mode_ == GridMode::kBicubic) {
      const double x0 = std::floor(fx), y0 = std::floor(fy);
      const double tx = fx - x0, ty = fy - y0;
      double wx[4], wy[4];
      cubic_weights(tx, wx);
      cubic_weights(ty, wy);
      double sum = 0.0;
      for (int j = 0; j < 4; ++j) {
        const double yy = pad_coordinate(y0 - 1 + j, h);
        double row = 0.0;
        for (int i = 0; i < 4; ++i) {
          row += wx[i] * pixel(plane, h, w, yy, pad_coordinate(x0 - 1 + i, w));
        }
        sum += wy[j] * row;
      }
      return sum;
    }
    fx = pad_coordinate(fx, w);
    fy = pad_coordinate(fy, h);
    if (mode_ == GridMode::kNearest) {
      return pixel(plane, h, w, std::nearbyint(fy), std::nearbyint(fx));
    }
    const double x0 = std::floor(fx), y0 = std::floor(fy);
    const double lx = fx - x0, ly = fy - y0;
    return (1 - ly) *
               ((1 - lx) * pixel(plane, h, w, y0, x0) + lx * pixel(plane, h, w, y0, x0 + 1)) +
           ly * ((1 - lx) * pixel(plane, h, w, y0 + 1, x0) +
                 lx * pixel(plane, h, w, y0 + 1, x0 + 1));
  }

  // Cubic convolution weights (A = -0.75) of the taps at offsets -1, 0, 1, 2 for fraction t.
  static void cubic_weights(double t, double* out) {
    constexpr double a = -0.75;
    auto near = [](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
    auto far = [](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
    out[0] = far(t + 1);
    out[1] = near(t);
    out[2] = near(1 - t);
    out[3] = far(2 - t);
  }

  GridMode mode_ = GridMode::kBilinear;
  GridPadding padding_ = GridPadding::kZeros;
  bool align_corners_ = false;
};

// ---------------------------------------------------------------------------------------------
// RoiAlign (opsets 10, 16): average or max of bilinear samples over each bin of each region.

class RoiAlignKernel final : public Kernel {
 public:
  explicit RoiAlignKernel(const NodeInfo& node) {
    const auto& attrs = node.attrs;
    const std::string mode = attrs.get_string("mode", "avg");
    OPENBPU_CHECK(mode == "avg" || mode == "max", "RoiAlign: mode must be avg or max, got '", mode, "'");
    max_mode_ = mode == "max";
    output_height_ = attrs.get_int("output_height", 1);
    output_width_ = attrs.get_int("output_width", 1);
    OPENBPU_CHECK(output_height_ > 0 && output_width_ > 0,
          "RoiAlign: output_height and output_width must be > 0, got ", output_height_, " and ",
          output_width_);
    sampling_ratio_ = attrs.get_int("sampling_ratio", 0);
    OPENBPU_CHECK(sampling_ratio_ >= 0, "RoiAlign: sampling_ratio must be >= 0, got ", sampling_ratio_);
    spatial_scale_ = attrs.get_float("spatial_scale", 1.0f);
    if (node.opset >= 16) {
      const std::string ctm = attrs.get_string("coordinate_transformation_mode", "half_pixel");
      OPENBPU_CHECK(ctm == "half_pixel" || ctm == "output_half_pixel",
            "RoiAlign: coordinate_transformation_mode must be half_pixel or output_half_pixel, "
            "got '",
            ctm, "'");
      half_pixel_ = ctm == "half_pixel";
    } else {
      OPENBPU_CHECK(!attrs.has("coordinate_transformation_mode"),
            "RoiAlign-10 has no attribute 'coordinate_transformation_mode'");
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& rois = ctx.input(1);
    const Tensor& batch_indices = ctx.input(2);
    OPENBPU_CHECK(x.rank() == 4, "RoiAlign: X must be 4-D [N, C, H, W], got ", x.describe());
    OPENBPU_CHECK(rois.rank() == 2 && rois.dim(1) == 4, "RoiAlign: rois must be [num_rois, 4], got ",
          rois.describe());
    OPENBPU_CHECK(rois.dtype() == x.dtype(), "RoiAlign: rois type ", dtype_name(rois.dtype()),
          " must equal X type ", dtype_name(x.dtype()));
    OPENBPU_CHECK(batch_indices.rank() == 1 && batch_indices.dim(0) == rois.dim(0),
          "RoiAlign: batch_indices must be [num_rois] = [", rois.dim(0), "], got ",
          batch_indices.describe());
    OPENBPU_CHECK(batch_indices.dtype() == DataType::kInt64 || batch_indices.dtype() == DataType::kInt32,
          "RoiAlign: batch_indices must be int64, got ", batch_indices.describe());
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
    const int64_t num_rois = rois.dim(0);
    const std::vector<int64_t> batch = batch_indices.to_int64_vector();
    for (int64_t r = 0; r < num_rois; ++r) {
      OPENBPU_CHECK(batch[size_t(r)] >= 0 && batch[size_t(r)] < n, "RoiAlign: batch_indices[", r,
            "] = ", batch[size_t(r)], " is out of range [0, ", n, ")");
    }
    const int64_t ph_count = output_height_, pw_count = output_width_;
    Tensor& y = ctx.allocate_output(0, x.dtype(), {num_rois, c, ph_count, pw_count});
    if (y.element_count() == 0 || h == 0 || w == 0) return;  // an empty map pools zeros
    dispatch<FloatTypes>(x.dtype(), "RoiAlign", [&]<typename T>() {
      const T* in = x.data<T>();
      T* out = y.data<T>();
      parallel_for(ctx.thread_pool(), num_rois * c, 1, [&](int64_t begin, int64_t end) {
        RegionSamples region;
        for (int64_t rc = begin; rc < end; ++rc) {
          const int64_t r = rc / c, ch = rc % c;
          if (rc == begin || ch == 0) region = region_samples(rois, r, h, w);
          const T* plane = in + (batch[size_t(r)] * c + ch) * h * w;
          pool_bins(plane, region, out + rc * ph_count * pw_count);
        }
      });
    });
  }

 private:
  // One bilinear sample: four pixel offsets and weights (zero weights outside the map).
  struct Sample {
    int64_t offset[4];
    double weight[4];
  };

  // The samples of every bin of one region, bin-major, `per_bin` samples per bin.
  struct RegionSamples {
    int64_t per_bin = 0;
    std::vector<Sample> samples;
  };

  RegionSamples region_samples(const Tensor& rois, int64_t r, int64_t h, int64_t w) const {
    const double offset = half_pixel_ ? 0.5 : 0.0;
    const double scale = spatial_scale_;
    const double start_w = rois.float_at(r * 4 + 0) * scale - offset;
    const double start_h = rois.float_at(r * 4 + 1) * scale - offset;
    const double end_w = rois.float_at(r * 4 + 2) * scale - offset;
    const double end_h = rois.float_at(r * 4 + 3) * scale - offset;
    double roi_w = end_w - start_w, roi_h = end_h - start_h;
    if (!half_pixel_) {
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    OPENBPU_CHECK(std::isfinite(roi_w) && std::isfinite(roi_h) && std::fabs(start_w) < kFarOutside &&
              std::fabs(start_h) < kFarOutside && std::fabs(roi_w) < kFarOutside &&
              std::fabs(roi_h) < kFarOutside,
          "RoiAlign: region ", r, " has non-finite or out-of-range coordinates");
    const double out_h = static_cast<double>(output_height_);
    const double out_w = static_cast<double>(output_width_);
    const double bin_h = roi_h / out_h;
    const double bin_w = roi_w / out_w;
    // Samples per bin along each axis: sampling_ratio, or adaptive ceil(bin size).
    const int64_t grid_h = std::max<int64_t>(
        sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(roi_h / out_h)), 0);
    const int64_t grid_w = std::max<int64_t>(
        sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(roi_w / out_w)), 0);
    OPENBPU_CHECK(grid_h * grid_w <= (int64_t{1} << 24), "RoiAlign: region ", r, " needs ", grid_h, " x ",
          grid_w, " samples per bin, more than supported");
    RegionSamples region;
    region.per_bin = grid_h * grid_w;
    region.samples.reserve(static_cast<size_t>(output_height_ * output_width_ * region.per_bin));
    for (int64_t ph = 0; ph < output_height_; ++ph) {
      for (int64_t pw = 0; pw < output_width_; ++pw) {
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const double yy = start_h + static_cast<double>(ph) * bin_h +
                            (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const double xx = start_w + static_cast<double>(pw) * bin_w +
                              (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
            region.samples.push_back(bilinear_sample(yy, xx, h, w));
          }
        }
      }
    }
    return region;
  }

  static Sample bilinear_sample(double y, double x, int64_t h, int64_t w) {
    Sample s{{0, 0, 0, 0}, {0, 0, 0, 0}};
    if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) {
      return s;  // outside the feature map: contributes zero
    }
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
    int64_t y_high, x_high;
    if (y_low >= h - 1) {
      y_high = y_low = h - 1;
      y = static_cast<double>(y_low);
    } else {
      y_high = y_low + 1;
    }
    if (x_low >= w - 1) {
      x_high = x_low = w - 1;
      x = static_cast<double>(x_low);
    } else {
      x_high = x_low + 1;
    }
    const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
    const double hy = 1 - ly, hx = 1 - lx;
    s.offset[0] = y_low * w + x_low;
    s.offset[1] = y_low * w + x_high;
    s.offset[2] = y_high * w + x_low;
    s.offset[3] = y_high * w + x_high;
    s.weight[0] = hy * hx;
    s.weight[1] = hy * lx;
    s.weight[2] = ly * hx;
    s.weight[3] = ly * lx;
    return s;
  }

  template <typename T>
  void pool_bins(const T* plane, const RegionSamples& region, T* dst) const {
    const int64_t per_bin = region.per_bin;
    const double count = static_cast<double>(std::max<int64_t>(per_bin, 1));
    const int64_t bins = output_height_ * output_width_;
    for (int64_t bin = 0; bin < bins; ++bin) {
      double value = 0.0;
      for (int64_t i = 0; i < per_bin; ++i) {
        const Sample& s = region.samples[static_cast<size_t>(bin * per_bin + i)];
        if (max_mode_) {
          // ONNX reference / onnxruntime: the max of the weighted corner values.
          double m = s.weight[0] * static_cast<double>(to_compute(plane[s.offset[0]]));
          for (int k = 1; k < 4; ++k) {
            m = std::max(m, s.weight[k] * static_cast<double>(to_compute(plane[s.offset[k]])));
          }
          value = i == 0 ? m : std::max(value, m);
        } else {
          for (int k = 0; k < 4; ++k) {
            value += s.weight[k] * static_cast<double>(to_compute(plane[s.offset[k]]));
          }
        }
      }
      if (!max_mode_) value /= count;
      dst[bin] = from_compute<T>(static_cast<ComputeType<T>>(value));
    }
  }

  bool max_mode_ = false;
  bool half_pixel_ = false;  // opset 10 behaves as output_half_pixel
  int64_t output_height_ = 1;
  int64_t output_width_ = 1;
  int64_t sampling_ratio_ = 0;
  double spatial_scale_ = 1.0;
};

// ---------------------------------------------------------------------------------------------
// NonMaxSuppression (opsets 10, 11): greedy per-class suppression by IoU.

struct Box {
  double y1, x1, y2, x2;  // normalised so that y1 <= y2, x1 <= x2
  double area() const { return (y2 - y1) * (x2 - x1); }
};

class NonMaxSuppressionKernel final : public Kernel {
 public:
  explicit NonMaxSuppressionKernel(const NodeInfo& node) {
    const int64_t center = node.attrs.get_int("center_point_box", 0);
    OPENBPU_CHECK(center == 0 || center == 1, "NonMaxSuppression: center_point_box must be 0 or 1, got ",
          center);
    center_point_box_ = center == 1;
  }

  void run(KernelContext& ctx) const override {
    const Tensor& boxes = ctx.input(0);
    const Tensor& scores = ctx.input(1);
    OPENBPU_CHECK(boxes.rank() == 3 && boxes.dim(2) == 4,
          "NonMaxSuppression: boxes must be [num_batches, spatial_dimension, 4], got ",
          boxes.describe());
    OPENBPU_CHECK(scores.rank() == 3,
          "NonMaxSuppression: scores must be [num_batches, num_classes, "
          "spatial_dimension], got ",
          scores.describe());
    OPENBPU_CHECK(scores.dim(0) == boxes.dim(0) && scores.dim(2) == boxes.dim(1),
          "NonMaxSuppression: scores ", scores.describe(), " do not match boxes ",
          boxes.describe());
    OPENBPU_CHECK(dtype_is_float(boxes.dtype()) && dtype_is_float(scores.dtype()),
          "NonMaxSuppression: boxes and scores must be float tensors, got ", boxes.describe(),
          " and ", scores.describe());
    int64_t max_per_class = 0;
    if (const Tensor* t = ctx.optional_input(2); t != nullptr && t->element_count() > 0) {
      OPENBPU_CHECK(t->element_count() == 1 && !dtype_is_float(t->dtype()),
            "NonMaxSuppression: max_output_boxes_per_class must be an integer scalar, got ",
            t->describe());
      max_per_class = t->int_at(0);
    }
    double iou_threshold = 0.0;
    if (const Tensor* t = ctx.optional_input(3); t != nullptr && t->element_count() > 0) {
      OPENBPU_CHECK(t->element_count() == 1 && dtype_is_float(t->dtype()),
            "NonMaxSuppression: iou_threshold must be a float scalar, got ", t->describe());
      iou_threshold = t->float_at(0);
      OPENBPU_CHECK(iou_threshold >= 0 && iou_threshold <= 1,
            "NonMaxSuppression: iou_threshold must be in [0, 1], got ", iou_threshold);
    }
    bool has_score_threshold = false;
    double score_threshold = 0.0;
    if (const Tensor* t = ctx.optional_input(4); t != nullptr && t->element_count() > 0) {
      OPENBPU_CHECK(t->element_count() == 1 && dtype_is_float(t->dtype()),
            "NonMaxSuppression: score_threshold must be a float scalar, got ", t->describe());
      has_score_threshold = true;
      score_threshold = t->float_at(0);
    }

    const int64_t batches = boxes.dim(0), classes = scores.dim(1), count = boxes.dim(1);
    std::vector<int64_t> selected;  // triples
    if (max_per_class > 0) {
      std::vector<Box> box(static_cast<size_t>(count));
      std::vector<int64_t> order;
      std::vector<int64_t> kept;
      for (int64_t b = 0; b < batches; ++b) {
        for (int64_t i = 0; i < count; ++i) box[size_t(i)] = read_box(boxes, b * count + i);
        for (int64_t cls = 0; cls < classes; ++cls) {
          const int64_t base = (b * classes + cls) * count;
          order.clear();
          for (int64_t i = 0; i < count; ++i) {
            const double s = scores.float_at(base + i);
            if (std::isnan(s)) continue;
            if (!has_score_threshold || s > score_threshold) order.push_back(i);
          }
          // Highest score first; equal scores keep the lower box index first.
          std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) {
            return scores.float_at(base + l) > scores.float_at(base + r);
          });
          kept.clear();
          for (int64_t i : order) {
            if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
            bool suppressed = false;
            for (int64_t k : kept) {
              if (overlaps(box[size_t(k)], box[size_t(i)], iou_threshold)) {
                suppressed = true;
                break;
              }
            }
            if (suppressed) continue;
            kept.push_back(i);
            selected.insert(selected.end(), {b, cls, i});
          }
        }
      }
    }
    const int64_t num = static_cast<int64_t>(selected.size() / 3);
    Tensor& y = ctx.allocate_output(0, DataType::kInt64, {num, 3});
    std::copy(selected.begin(), selected.end(), y.data<int64_t>());
  }

 private:
  Box read_box(const Tensor& boxes, int64_t i) const {
    const double a = boxes.float_at(i * 4), b = boxes.float_at(i * 4 + 1);
    const double c = boxes.float_at(i * 4 + 2), d = boxes.float_at(i * 4 + 3);
    if (center_point_box_) {  // [x_center, y_center, width, height]
      return {b - d / 2, a - c / 2, b + d / 2, a + c / 2};
    }
    return {std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)};  // [y1, x1, y2, x2]
  }

  static bool overlaps(const Box& p, const Box& q, double threshold) {
    const double area_p = p.area(), area_q = q.area();
    if (!(area_p > 0) || !(area_q > 0)) return false;
    const double ih = std::min(p.y2, q.y2) - std::max(p.y1, q.y1);
    const double iw = std::min(p.x2, q.x2) - std::max(p.x1, q.x1);
    if (!(ih > 0) || !(iw > 0)) return false;
    const double inter = ih * iw;
    const double uni = area_p + area_q - inter;
    if (!(uni > 0)) return false;
    return inter / uni > threshold;
  }

  bool center_point_box_ = false;
};

}  // namespace

void register_detection_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"",
                  "GridSample",
                  16,
                  {{"align_corners", AttrKind::kInt},
                   {"mode", AttrKind::kString},
                   {"padding_mode", AttrKind::kString}},
                  &make_kernel<GridSampleKernel>});
  defs.push_back({"",
                  "RoiAlign",
                  10,
                  {{"mode", AttrKind::kString},
                   {"output_height", AttrKind::kInt},
                   {"output_width", AttrKind::kInt},
                   {"sampling_ratio", AttrKind::kInt},
                   {"spatial_scale", AttrKind::kFloat},
                   {"coordinate_transformation_mode", AttrKind::kString}},
                  &make_kernel<RoiAlignKernel>});
  defs.push_back({"",
                  "NonMaxSuppression",
                  10,
                  {{"center_point_box", AttrKind::kInt}},
                  &make_kernel<NonMaxSuppressionKernel>});
}

}  // namespace openbpu::kernels
