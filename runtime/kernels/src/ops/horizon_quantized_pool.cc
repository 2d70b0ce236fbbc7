// Horizon-domain integer averaging (docs/quantized_ops.md): HzSQuantizedGlobalAveragePool,
// HzSQuantizedReduceMean and HzSQuantizedAveragePool. Sums are exact (int64); the division by
// the element count and the rescaling are one fixed-point multiplier per count, computed by
// the quantizer, applied with simulator/integer_arithmetic.h.
#include <algorithm>
#include <array>

#include "families.h"
#include "horizon_attributes.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/convolution.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/quantized_tables.h"

namespace openbpu::kernels {

namespace {

namespace sim = openbpu::simulator;
using horizon::check_activation_type;
using horizon::FixedPointMultiplier;

using ActivationTypes = TypeList<int8_t, int16_t>;

FixedPointMultiplier read_required_multiplier(std::string_view op, const AttributeMap& attrs) {
  const std::vector<FixedPointMultiplier> m =
      horizon::read_multiplier(op, attrs, "multiplier", "shift");
  OPENBPU_CHECK(!m.empty(), op, ": attributes multiplier and shift are required");
  return m[0];
}

// ---------------------------------------------------------------------------------------------
// HzSQuantizedGlobalAveragePool

class QuantizedGlobalAveragePoolKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzSQuantizedGlobalAveragePool";

  explicit QuantizedGlobalAveragePoolKernel(const NodeInfo& node)
      : f_(read_required_multiplier(kOp, node.attrs)) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    check_activation_type(kOp, "x", x.dtype(), x.describe());
    OPENBPU_CHECK(x.rank() >= 3, kOp, ": x must have rank >= 3 (N x C x spatial...), got ",
                  x.describe());
    Shape shape(x.shape().size(), 1);
    shape[0] = x.dim(0);
    shape[1] = x.dim(1);
    Tensor& y = ctx.allocate_output(0, x.dtype(), shape);
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t plane_size = dims_product(x.shape(), 2, x.shape().size());
    dispatch<ActivationTypes>(x.dtype(), kOp, [&]<typename T>() {
      const T* px = x.data<T>();
      T* py = y.data<T>();
      parallel_for(ctx.thread_pool(), planes, 1, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const T* in = px + p * plane_size;
          int64_t sum = 0;
          for (int64_t i = 0; i < plane_size; ++i) sum += in[i];
          py[p] = sim::requantize<T>(sum, f_);
        }
      });
    });
  }

 private:
  FixedPointMultiplier f_;
};

// ---------------------------------------------------------------------------------------------
// HzSQuantizedReduceMean

class QuantizedReduceMeanKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzSQuantizedReduceMean";

  explicit QuantizedReduceMeanKernel(const NodeInfo& node)
      : f_(read_required_multiplier(kOp, node.attrs)),
        axes_(node.attrs.get_ints("axes", {})),
        keepdims_(node.attrs.get_int("keepdims", 1)) {
    OPENBPU_CHECK(keepdims_ == 0 || keepdims_ == 1, kOp, ": keepdims must be 0 or 1, got ",
                  keepdims_);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    check_activation_type(kOp, "x", x.dtype(), x.describe());
    const int64_t rank = x.rank();
    std::vector<bool> reduced(size_t(rank), axes_.empty());
    for (int64_t a : normalize_axes(axes_, rank, "HzSQuantizedReduceMean: axes")) {
      reduced[size_t(a)] = true;
    }
    // Output strides of each input axis (0 on reduced axes).
    Shape kept_shape, out_shape;
    for (int64_t d = 0; d < rank; ++d) {
      kept_shape.push_back(reduced[size_t(d)] ? 1 : x.dim(d));
      if (!reduced[size_t(d)] || keepdims_ == 1) out_shape.push_back(kept_shape.back());
    }
    std::vector<int64_t> strides = contiguous_strides(kept_shape);
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[size_t(d)]) strides[size_t(d)] = 0;
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), out_shape);
    std::vector<int64_t> sums(size_t(y.element_count()), 0);
    dispatch<ActivationTypes>(x.dtype(), kOp, [&]<typename T>() {
      const T* px = x.data<T>();
      const int64_t total = x.element_count();
      if (total > 0) {
        // Walk x in row-major order; rows of the last axis go to out + t * last_stride.
        const int64_t last = rank == 0 ? 1 : x.dim(rank - 1);
        const int64_t last_stride = rank == 0 ? 0 : strides[size_t(rank - 1)];
        std::vector<int64_t> index(size_t(rank), 0);
        int64_t out = 0;
        for (int64_t i = 0; i < total; i += last) {
          for (int64_t t = 0; t < last; ++t) sums[size_t(out + t * last_stride)] += px[i + t];
          for (int64_t d = rank - 1; d-- > 0;) {
            out += strides[size_t(d)];
            if (++index[size_t(d)] < x.dim(d)) break;
            out -= strides[size_t(d)] * x.dim(d);
            index[size_t(d)] = 0;
          }
        }
      }
      T* py = y.data<T>();
      for (size_t i = 0; i < sums.size(); ++i) py[i] = sim::requantize<T>(sums[i], f_);
    });
  }

 private:
  FixedPointMultiplier f_;
  std::vector<int64_t> axes_;
  int64_t keepdims_;
};

// ---------------------------------------------------------------------------------------------
// HzSQuantizedAveragePool

class QuantizedAveragePoolKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzSQuantizedAveragePool";

  explicit QuantizedAveragePoolKernel(const NodeInfo& node)
      : window_(WindowAttributes::read(kOp, node.attrs)),
        ceil_mode_(node.attrs.get_int("ceil_mode", 0)),
        count_include_pad_(node.attrs.get_int("count_include_pad", 0)) {
    OPENBPU_CHECK(ceil_mode_ == 0 || ceil_mode_ == 1, kOp, ": ceil_mode must be 0 or 1, got ",
                  ceil_mode_);
    OPENBPU_CHECK(count_include_pad_ == 0 || count_include_pad_ == 1, kOp,
                  ": count_include_pad must be 0 or 1, got ", count_include_pad_);
    OPENBPU_CHECK(!window_.kernel_shape.empty() && window_.kernel_shape.size() <= 3, kOp,
                  ": kernel_shape must have 1 to 3 entries, got ", window_.kernel_shape.size());
    int64_t taps = 1;
    for (int64_t k : window_.kernel_shape) taps *= k;
    multipliers_ = horizon::read_multipliers(kOp, node.attrs, "multipliers", "shifts");
    OPENBPU_CHECK(static_cast<int64_t>(multipliers_.size()) == taps, kOp,
                  ": multipliers/shifts must have one entry per window count 1..", taps,
                  " (the product of kernel_shape), got ", multipliers_.size());
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    check_activation_type(kOp, "x", x.dtype(), x.describe());
    const size_t r = window_.kernel_shape.size();
    OPENBPU_CHECK(x.rank() == static_cast<int64_t>(r) + 2, kOp, ": x must have rank ", r + 2,
                  " (N x C and one axis per kernel_shape entry), got ", x.describe());
    WindowGeometry g;
    g.in.assign(x.shape().begin() + 2, x.shape().end());
    g.kernel = window_.kernel_shape;
    resolve_window(kOp, window_, ceil_mode_ == 1, g);
    Shape shape{x.dim(0), x.dim(1)};
    shape.insert(shape.end(), g.out.begin(), g.out.end());
    Tensor& y = ctx.allocate_output(0, x.dtype(), shape);
    if (y.element_count() == 0) return;
    const Window3D w(g);
    const std::array<std::vector<int64_t>, 3> counts =
        average_pool_axis_counts(g, count_include_pad_ == 1);
    const int64_t planes = x.dim(0) * x.dim(1);
    dispatch<ActivationTypes>(x.dtype(), kOp, [&]<typename T>() {
      const T* px = x.data<T>();
      T* py = y.data<T>();
      parallel_for(ctx.thread_pool(), planes, 1, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> sums(static_cast<size_t>(w.out[2]));
        for (int64_t plane = begin; plane < end; ++plane) {
          const T* in = px + plane * w.in_size();
          for (int64_t od = 0; od < w.out[0]; ++od) {
            for (int64_t oh = 0; oh < w.out[1]; ++oh) {
              std::fill(sums.begin(), sums.end(), int64_t{0});
              for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
                const int64_t id = od * w.strides[0] - w.pads[0] + kd * w.dilations[0];
                if (id < 0 || id >= w.in[0]) continue;
                for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
                  const int64_t ih = oh * w.strides[1] - w.pads[1] + kh * w.dilations[1];
                  if (ih < 0 || ih >= w.in[1]) continue;
                  const T* row = in + (id * w.in[1] + ih) * w.in[2];
                  for (int64_t ow = 0; ow < w.out[2]; ++ow) {
                    for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
                      const int64_t iw = ow * w.strides[2] - w.pads[2] + kw * w.dilations[2];
                      if (iw >= 0 && iw < w.in[2]) sums[size_t(ow)] += row[iw];
                    }
                  }
                }
              }
              T* out = py + ((plane * w.out[0] + od) * w.out[1] + oh) * w.out[2];
              const int64_t rows = counts[0][size_t(od)] * counts[1][size_t(oh)];
              for (int64_t ow = 0; ow < w.out[2]; ++ow) {
                const int64_t count = rows * counts[2][size_t(ow)];
                // A window without any counted tap (only padding) sums to 0.
                out[ow] = count == 0 ? T{0}
                                     : sim::requantize<T>(sums[size_t(ow)],
                                                          multipliers_[size_t(count - 1)]);
              }
            }
          }
        }
      });
    });
  }

 private:
  WindowAttributes window_;
  int64_t ceil_mode_;
  int64_t count_include_pad_;
  std::vector<FixedPointMultiplier> multipliers_;
};

}  // namespace

void register_horizon_quantized_pool_kernels(std::vector<KernelDef>& defs) {
  const std::vector<AttrSpec> scales = {{"input_scale", AttrKind::kFloat},
                                        {"output_scale", AttrKind::kFloat}};
  std::vector<AttrSpec> global = scales;
  global.push_back({"multiplier", AttrKind::kInt, true});
  global.push_back({"shift", AttrKind::kInt, true});
  defs.push_back({"horizon", "HzSQuantizedGlobalAveragePool", 1, global,
                  &make_kernel<QuantizedGlobalAveragePoolKernel>});
  std::vector<AttrSpec> reduce = global;
  reduce.push_back({"axes", AttrKind::kInts});
  reduce.push_back({"keepdims", AttrKind::kInt});
  defs.push_back(
      {"horizon", "HzSQuantizedReduceMean", 1, reduce, &make_kernel<QuantizedReduceMeanKernel>});
  std::vector<AttrSpec> pool = scales;
  for (AttrSpec spec : std::initializer_list<AttrSpec>{{"kernel_shape", AttrKind::kInts, true},
                                                       {"strides", AttrKind::kInts},
                                                       {"pads", AttrKind::kInts},
                                                       {"dilations", AttrKind::kInts},
                                                       {"ceil_mode", AttrKind::kInt},
                                                       {"count_include_pad", AttrKind::kInt},
                                                       {"multipliers", AttrKind::kInts, true},
                                                       {"shifts", AttrKind::kInts, true}}) {
    pool.push_back(spec);
  }
  defs.push_back(
      {"horizon", "HzSQuantizedAveragePool", 1, pool, &make_kernel<QuantizedAveragePoolKernel>});
}

}  // namespace openbpu::kernels
