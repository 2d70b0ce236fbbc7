// Pooling: AveragePool, MaxPool (with Indices), LpPool, their Global variants, MaxUnpool.
// Windows use the geometry of convolution.h (auto_pad, pads, strides, dilations, ceil_mode).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "families.h"
#include "openbpu/kernels/convolution.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/elementwise.h"
#include "openbpu/kernels/quantized_tables.h"
#include "openbpu/kernels/vector_clones.h"

namespace openbpu::kernels {

namespace {

using MaxPoolTypes = TypeList<float, double, Float16, BFloat16, int8_t, uint8_t, int16_t>;  // int16: the quantized model's BPU MaxPool

// Checks X against the window attributes and resolves the geometry (up to 3 spatial axes).
WindowGeometry pool_geometry(std::string_view op, const WindowAttributes& attrs, bool ceil_mode,
                             const Tensor& x) {
  OPENBPU_CHECK(x.rank() >= 3, op, ": X must have rank >= 3 (N x C x spatial...), got ", x.describe());
  const size_t r = static_cast<size_t>(x.rank() - 2);
  OPENBPU_CHECK(r <= 3, op, ": supports up to 3 spatial axes, got ", x.describe());
  OPENBPU_CHECK(attrs.kernel_shape.size() == r, op, ": kernel_shape must have ", r,
        " entries (one per spatial axis of ", x.describe(), "), got ", attrs.kernel_shape.size());
  WindowGeometry g;
  g.in.assign(x.shape().begin() + 2, x.shape().end());
  g.kernel = attrs.kernel_shape;
  resolve_window(op, attrs, ceil_mode, g);
  return g;
}

Shape pooled_shape(const Tensor& x, const WindowGeometry& g) {
  Shape s{x.dim(0), x.dim(1)};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

// Visits the window of output position (od, oh, ow): fn(id, ih, iw) for each kernel tap inside
// the input, in row-major kernel order.
template <typename Fn>
void for_each_tap(const Window3D& w, int64_t od, int64_t oh, int64_t ow, Fn&& fn) {
  for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
    const int64_t id = od * w.strides[0] - w.pads[0] + kd * w.dilations[0];
    if (id < 0 || id >= w.in[0]) continue;
    for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
      const int64_t ih = oh * w.strides[1] - w.pads[1] + kh * w.dilations[1];
      if (ih < 0 || ih >= w.in[1]) continue;
      for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
        const int64_t iw = ow * w.strides[2] - w.pads[2] + kw * w.dilations[2];
        if (iw < 0 || iw >= w.in[2]) continue;
        fn(id, ih, iw);
      }
    }
  }
}

// Pools whole output rows of planes [begin, end): for each output row (od, oh), acc[ow] starts at
// `init` and folds combine(acc, x) over the window's taps inside the input in (kd, kh, kw) order
// (the order of for_each_tap); emit(plane, od, oh, acc) then writes the row.
template <typename T, typename Acc, typename Combine, typename Emit>
void pool_rows(const Window3D& w, const T* x, int64_t begin, int64_t end, Acc init,
               Combine&& combine, Emit&& emit) {
  const int64_t out_w = w.out[2], in_w = w.in[2], sw = w.strides[2];
  std::vector<Acc> acc(static_cast<size_t>(out_w));
  for (int64_t plane = begin; plane < end; ++plane) {
    const T* in = x + plane * w.in_size();
    for (int64_t od = 0; od < w.out[0]; ++od) {
      for (int64_t oh = 0; oh < w.out[1]; ++oh) {
        std::fill(acc.begin(), acc.end(), init);
        for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
          const int64_t id = od * w.strides[0] - w.pads[0] + kd * w.dilations[0];
          if (id < 0 || id >= w.in[0]) continue;
          for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
            const int64_t ih = oh * w.strides[1] - w.pads[1] + kh * w.dilations[1];
            if (ih < 0 || ih >= w.in[1]) continue;
            const T* row = in + (id * w.in[1] + ih) * in_w;
            for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
              const int64_t offset = kw * w.dilations[2] - w.pads[2];  // iw = ow * sw + offset
              const int64_t lo = offset >= 0 ? 0 : ceil_div(-offset, sw);
              const int64_t hi = std::min(out_w, floor_div(in_w - 1 - offset, sw) + 1);
              for (int64_t ow = lo; ow < hi; ++ow) {
                acc[size_t(ow)] = combine(acc[size_t(ow)], to_compute(row[ow * sw + offset]));
              }
            }
          }
        }
        emit(plane, od, oh, acc.data());
      }
    }
  }
}

class AveragePoolKernel final : public Kernel {
 public:
  explicit AveragePoolKernel(const NodeInfo& node)
      : attrs_(WindowAttributes::read("AveragePool", node.attrs)),
        ceil_mode_(node.attrs.get_int("ceil_mode", 0) != 0),
        count_include_pad_(node.attrs.get_int("count_include_pad", 0) != 0) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const WindowGeometry g = pool_geometry("AveragePool", attrs_, ceil_mode_, x);
    Tensor& y = ctx.allocate_output(0, x.dtype(), pooled_shape(x, g));
    const Window3D w(g);
    const std::array<std::vector<int64_t>, 3> counts = average_pool_axis_counts(g, count_include_pad_);
    dispatch<FloatTypes>(x.dtype(), "AveragePool", [&]<typename T>() {
      T* py = y.data<T>();
      parallel_for(ctx.thread_pool(), x.dim(0) * x.dim(1), 1, [&](int64_t begin, int64_t end) {
        pool_rows<T, double>(
            w, x.data<T>(), begin, end, 0.0, [](double a, auto v) { return a + double(v); },
            [&](int64_t plane, int64_t od, int64_t oh, const double* sums) {
              T* out = py + ((plane * w.out[0] + od) * w.out[1] + oh) * w.out[2];
              const int64_t rows = counts[0][size_t(od)] * counts[1][size_t(oh)];
              for (int64_t ow = 0; ow < w.out[2]; ++ow) {
                const double count = double(rows * counts[2][size_t(ow)]);
                out[ow] = from_compute<T>(static_cast<ComputeType<T>>(sums[ow] / count));
              }
            });
      });
    });
  }

 private:
  WindowAttributes attrs_;
  bool ceil_mode_, count_include_pad_;
};

class MaxPoolKernel final : public Kernel {
 public:
  explicit MaxPoolKernel(const NodeInfo& node)
      : attrs_(WindowAttributes::read("MaxPool", node.attrs)),
        ceil_mode_(node.attrs.get_int("ceil_mode", 0) != 0),
        column_major_(node.attrs.get_int("storage_order", 0) != 0) {
    const int64_t order = node.attrs.get_int("storage_order", 0);
    OPENBPU_CHECK(order == 0 || order == 1, "MaxPool: storage_order must be 0 or 1, got ", order);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const WindowGeometry g = pool_geometry("MaxPool", attrs_, ceil_mode_, x);
    const Shape out_shape = pooled_shape(x, g);
    Tensor& y = ctx.allocate_output(0, x.dtype(), out_shape);
    const Window3D w(g);
    const int64_t planes = x.dim(0) * x.dim(1);
    if (ctx.output_count() > 1) {
      run_with_indices(ctx, x, w, y, ctx.allocate_output(1, DataType::kInt64, out_shape));
      return;
    }
    dispatch<MaxPoolTypes>(x.dtype(), "MaxPool", [&]<typename T>() {
      using C = ComputeType<T>;
      T* py = y.data<T>();
      parallel_for(ctx.thread_pool(), planes, 1, [&](int64_t begin, int64_t end) {
        pool_rows<T, C>(
            w, x.data<T>(), begin, end, std::numeric_limits<C>::lowest(),
            [](C a, C v) { return v > a ? v : a; },
            [&](int64_t plane, int64_t od, int64_t oh, const C* best) {
              T* out = py + ((plane * w.out[0] + od) * w.out[1] + oh) * w.out[2];
              for (int64_t ow = 0; ow < w.out[2]; ++ow) out[ow] = from_compute<T>(best[ow]);
            });
      });
    });
  }

 private:
  // Per output: the first maximal tap in window order and its flat index into X (row-major, or
  // column-major over the spatial axes with storage_order=1).
  void run_with_indices(KernelContext& ctx, const Tensor& x, const Window3D& w, Tensor& y,
                        Tensor& indices_tensor) const {
    int64_t* indices = indices_tensor.data<int64_t>();
    dispatch<MaxPoolTypes>(x.dtype(), "MaxPool", [&]<typename T>() {
      using C = ComputeType<T>;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      parallel_for(ctx.thread_pool(), x.dim(0) * x.dim(1), 1, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
          const T* in = px + plane * w.in_size();
          int64_t o = plane * w.out_size();
          for (int64_t od = 0; od < w.out[0]; ++od) {
            for (int64_t oh = 0; oh < w.out[1]; ++oh) {
              for (int64_t ow = 0; ow < w.out[2]; ++ow, ++o) {
                C best = std::numeric_limits<C>::lowest();
                int64_t best_d = -1, best_h = 0, best_w = 0;
                for_each_tap(w, od, oh, ow, [&](int64_t id, int64_t ih, int64_t iw) {
                  const C v = to_compute(in[(id * w.in[1] + ih) * w.in[2] + iw]);
                  if (best_d < 0 || v > best) {
                    best = v;
                    best_d = id;
                    best_h = ih;
                    best_w = iw;
                  }
                });
                py[o] = from_compute<T>(best);
                const int64_t spatial = column_major_
                                            ? best_d + (best_h + best_w * w.in[1]) * w.in[0]
                                            : (best_d * w.in[1] + best_h) * w.in[2] + best_w;
                indices[o] = best_d < 0 ? -1 : plane * w.in_size() + spatial;
              }
            }
          }
        }
      });
    });
  }

  WindowAttributes attrs_;
  bool ceil_mode_, column_major_;
};

class LpPoolKernel final : public Kernel {
 public:
  explicit LpPoolKernel(const NodeInfo& node)
      : attrs_(WindowAttributes::read("LpPool", node.attrs)),
        ceil_mode_(node.attrs.get_int("ceil_mode", 0) != 0),
        p_(node.attrs.get_int("p", 2)) {
    OPENBPU_CHECK(p_ > 0, "LpPool: p must be > 0, got ", p_);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const WindowGeometry g = pool_geometry("LpPool", attrs_, ceil_mode_, x);
    Tensor& y = ctx.allocate_output(0, x.dtype(), pooled_shape(x, g));
    const Window3D w(g);
    const double p = static_cast<double>(p_);
    const bool square = p_ == 2;
    dispatch<FloatTypes>(x.dtype(), "LpPool", [&]<typename T>() {
      T* py = y.data<T>();
      parallel_for(ctx.thread_pool(), x.dim(0) * x.dim(1), 1, [&](int64_t begin, int64_t end) {
        pool_rows<T, double>(
            w, x.data<T>(), begin, end, 0.0,
            [&](double a, auto v) {
              const double m = std::abs(double(v));
              return a + (square ? m * m : std::pow(m, p));
            },
            [&](int64_t plane, int64_t od, int64_t oh, const double* sums) {
              T* out = py + ((plane * w.out[0] + od) * w.out[1] + oh) * w.out[2];
              for (int64_t ow = 0; ow < w.out[2]; ++ow) {
                const double r = square ? std::sqrt(sums[ow]) : std::pow(sums[ow], 1.0 / p);
                out[ow] = from_compute<T>(static_cast<ComputeType<T>>(r));
              }
            });
      });
    });
  }

 private:
  WindowAttributes attrs_;
  bool ceil_mode_;
  int64_t p_;
};

enum class GlobalReduction { kAverage, kMax, kLp };

// *sum = the n floats summed in double as 16 interleaved partial sums (element i into sum
// i % 16), combined pairwise: a fixed order, vectorised on every path.
struct FloatSum {
  OPENBPU_KERNEL_INLINE static void run(const float* in, int64_t n, double* sum) {
    constexpr int kParts = 16;
    double part[kParts] = {};
    int64_t i = 0;
    for (; i + kParts <= n; i += kParts) {
      for (int j = 0; j < kParts; ++j) part[j] += static_cast<double>(in[i + j]);
    }
    for (int j = 0; i < n; ++i, ++j) part[j] += static_cast<double>(in[i]);
    for (int width = kParts / 2; width > 0; width /= 2) {
      for (int j = 0; j < width; ++j) part[j] += part[j + width];
    }
    *sum = part[0];
  }
};

// GlobalAveragePool / GlobalMaxPool / GlobalLpPool: one value per (n, c) over all spatial axes.
template <GlobalReduction kReduction>
class GlobalPoolKernel final : public Kernel {
 public:
  explicit GlobalPoolKernel(const NodeInfo& node) : p_(node.attrs.get_int("p", 2)) {
    OPENBPU_CHECK(p_ > 0, node.op_type, ": p must be > 0, got ", p_);
  }

  void run(KernelContext& ctx) const override {
    constexpr std::string_view op = kReduction == GlobalReduction::kAverage ? "GlobalAveragePool"
                                    : kReduction == GlobalReduction::kMax   ? "GlobalMaxPool"
                                                                            : "GlobalLpPool";
    const Tensor& x = ctx.input(0);
    OPENBPU_CHECK(x.rank() >= 2, op, ": X must have rank >= 2 (N x C x spatial...), got ", x.describe());
    Shape out_shape(x.shape().size(), 1);
    out_shape[0] = x.dim(0);
    out_shape[1] = x.dim(1);
    Tensor& y = ctx.allocate_output(0, x.dtype(), out_shape);
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t spatial = planes == 0 ? 0 : x.element_count() / planes;
    const double p = static_cast<double>(p_);
    auto body = [&]<typename T>() {
      using C = ComputeType<T>;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      const int64_t grain = std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(spatial, 1));
      parallel_for(ctx.thread_pool(), planes, grain, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
          const T* in = px + plane * spatial;
          if constexpr (kReduction == GlobalReduction::kMax) {
            C best = spatial > 0 ? to_compute(in[0]) : std::numeric_limits<C>::lowest();
            for (int64_t i = 1; i < spatial; ++i) best = std::max(best, C(to_compute(in[i])));
            py[plane] = from_compute<T>(best);
          } else if constexpr (kReduction == GlobalReduction::kAverage &&
                               std::is_same_v<T, float>) {
            double sum = 0.0;
            vector_dispatch<FloatSum>(in, spatial, &sum);
            py[plane] = static_cast<float>(sum / static_cast<double>(spatial));
          } else {
            double sum = 0.0;
            for (int64_t i = 0; i < spatial; ++i) {
              const double v = static_cast<double>(to_compute(in[i]));
              if constexpr (kReduction == GlobalReduction::kAverage) {
                sum += v;
              } else {
                sum += std::pow(std::abs(v), p);
              }
            }
            const double r = kReduction == GlobalReduction::kAverage
                                 ? sum / static_cast<double>(spatial)
                                 : std::pow(sum, 1.0 / p);
            py[plane] = from_compute<T>(static_cast<C>(r));
          }
        }
      });
    };
    if constexpr (kReduction == GlobalReduction::kMax) {
      dispatch<MaxPoolTypes>(x.dtype(), op, body);
    } else {
      dispatch<FloatTypes>(x.dtype(), op, body);
    }
  }

 private:
  int64_t p_;
};

class MaxUnpoolKernel final : public Kernel {
 public:
  explicit MaxUnpoolKernel(const NodeInfo& node)
      : attrs_(WindowAttributes::read("MaxUnpool", node.attrs)) {}

  void run(KernelContext& ctx) const override {
    constexpr std::string_view op = "MaxUnpool";
    const Tensor& x = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor* output_shape = ctx.optional_input(2);
    OPENBPU_CHECK(x.rank() >= 3, op, ": X must have rank >= 3 (N x C x spatial...), got ", x.describe());
    OPENBPU_CHECK(indices.dtype() == DataType::kInt64 && indices.shape() == x.shape(), op,
          ": I must be int64 with the shape of X ", x.describe(), ", got ", indices.describe());
    const size_t r = static_cast<size_t>(x.rank() - 2);
    OPENBPU_CHECK(attrs_.kernel_shape.size() == r, op, ": kernel_shape must have ", r, " entries, got ",
          attrs_.kernel_shape.size());
    const std::vector<int64_t> strides =
        attrs_.strides.empty() ? std::vector<int64_t>(r, 1) : attrs_.strides;
    const std::vector<int64_t> pads =
        attrs_.pads.empty() ? std::vector<int64_t>(2 * r, 0) : attrs_.pads;
    OPENBPU_CHECK(strides.size() == r && pads.size() == 2 * r, op, ": strides must have ", r, " and pads ",
          2 * r, " entries");
    Shape out{x.dim(0), x.dim(1)};
    for (size_t i = 0; i < r; ++i) {
      out.push_back((x.dim(int64_t(i) + 2) - 1) * strides[i] - pads[i] - pads[i + r] +
                    attrs_.kernel_shape[i]);
      OPENBPU_CHECK(out.back() >= 0, op, ": inferred output size ", out.back(), " on axis ", i + 2,
            " is negative");
    }
    if (output_shape != nullptr) {
      const std::vector<int64_t> requested = output_shape->to_int64_vector();
      OPENBPU_CHECK(requested.size() == out.size(), op, ": output_shape must have ", out.size(),
            " entries, got ", output_shape->describe());
      OPENBPU_CHECK(requested[0] == out[0] && requested[1] == out[1], op, ": output_shape ",
            shape_to_string(requested), " must keep N and C of X ", x.describe());
      for (int64_t d : requested) OPENBPU_CHECK(d >= 0, op, ": output_shape entries must be >= 0");
      out = requested;
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), out);
    const int64_t total = y.element_count();
    const int64_t* idx = indices.data<int64_t>();
    dispatch<MaxPoolTypes>(x.dtype(), op, [&]<typename T>() {
      const T* px = x.data<T>();
      T* py = y.data<T>();
      for (int64_t i = 0; i < x.element_count(); ++i) {
        OPENBPU_CHECK(idx[i] >= 0 && idx[i] < total, op, ": index ", idx[i], " at position ", i,
              " is outside the output (", total, " elements)");
        py[idx[i]] = px[i];
      }
    });
  }

 private:
  WindowAttributes attrs_;
};

const std::vector<AttrSpec> kPoolAttributes = {
    {"auto_pad", AttrKind::kString}, {"ceil_mode", AttrKind::kInt},
    {"dilations", AttrKind::kInts},  {"kernel_shape", AttrKind::kInts, true},
    {"pads", AttrKind::kInts},       {"strides", AttrKind::kInts}};

std::vector<AttrSpec> with(std::vector<AttrSpec> specs, std::initializer_list<AttrSpec> more) {
  specs.insert(specs.end(), more);
  return specs;
}

}  // namespace

void register_pool_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"", "AveragePool", 1,
                  with(kPoolAttributes, {{"count_include_pad", AttrKind::kInt}}),
                  &make_kernel<AveragePoolKernel>});
  defs.push_back({"", "MaxPool", 1, with(kPoolAttributes, {{"storage_order", AttrKind::kInt}}),
                  &make_kernel<MaxPoolKernel>});
  // p is an int from opset 2 (a float in opset 1).
  defs.push_back({"", "LpPool", 2, with(kPoolAttributes, {{"p", AttrKind::kInt}}),
                  &make_kernel<LpPoolKernel>});
  defs.push_back(
      {"", "GlobalAveragePool", 1, {}, &make_kernel<GlobalPoolKernel<GlobalReduction::kAverage>>});
  defs.push_back(
      {"", "GlobalMaxPool", 1, {}, &make_kernel<GlobalPoolKernel<GlobalReduction::kMax>>});
  defs.push_back({"",
                  "GlobalLpPool",
                  2,
                  {{"p", AttrKind::kInt}},
                  &make_kernel<GlobalPoolKernel<GlobalReduction::kLp>>});
  defs.push_back({"",
                  "MaxUnpool",
                  9,
                  {{"kernel_shape", AttrKind::kInts, true},
                   {"pads", AttrKind::kInts},
                   {"strides", AttrKind::kInts}},
                  &make_kernel<MaxUnpoolKernel>});
}

}  // namespace openbpu::kernels
