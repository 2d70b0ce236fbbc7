// Horizon-domain integer operators along one axis (docs/quantized_ops.md):
// HzQuantizedArgMax / ArgMin (int8/int16 in, int32 indices out) and HzQuantizedSoftmax (int8/int16 in,
// int8/int16 out). The arithmetic is the one definition of
// simulator/integer_arithmetic.h, shared with the virtual BPU's functional units.
#include <algorithm>
#include <vector>

#include "families.h"
#include "horizon_attributes.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/elementwise.h"

namespace openbpu::kernels {

namespace {

using horizon::check_activation_type;

using ActivationTypes = TypeList<int8_t, int16_t>;

// outer × axis × inner view of a row-major tensor around `axis`.
struct AxisView {
  int64_t outer, extent, inner;
};

AxisView view_around(const Shape& shape, int64_t axis) {
  return {dims_product(shape, 0, size_t(axis)), shape[size_t(axis)],
          dims_product(shape, size_t(axis) + 1, shape.size())};
}

// ---------------------------------------------------------------------------------------------
// HzQuantizedArgMax / HzQuantizedArgMin: y = index of the first maximum (minimum) of x along
// `axis` (ties: the lowest index, as ONNX with select_last_index = 0). The quantized x is read
// directly: a positive per-tensor scale keeps the order of the real values.

template <bool kMin>
class QuantizedArgExtremeKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = kMin ? "HzQuantizedArgMin" : "HzQuantizedArgMax";

  explicit QuantizedArgExtremeKernel(const NodeInfo& node)
      : axis_(node.attrs.get_int("axis", 0)), keepdims_(node.attrs.get_int("keepdims", 1)) {
    OPENBPU_CHECK(keepdims_ == 0 || keepdims_ == 1, kOp, ": keepdims must be 0 or 1, got ", keepdims_);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    check_activation_type(kOp, "x", x.dtype(), x.describe());
    OPENBPU_CHECK(x.rank() >= 1, kOp, ": x must have rank >= 1, got ", x.describe());
    const int64_t axis = normalize_axis(axis_, x.rank(), kMin ? "HzQuantizedArgMin: axis" : "HzQuantizedArgMax: axis");
    OPENBPU_CHECK(x.dim(axis) >= 1, kOp, ": the reduced axis of ", x.describe(), " is empty");
    Shape out_shape;
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (d != axis) {
        out_shape.push_back(x.dim(d));
      } else if (keepdims_ == 1) {
        out_shape.push_back(1);
      }
    }
    Tensor& y = ctx.allocate_output(0, DataType::kInt32, out_shape);
    const AxisView v = view_around(x.shape(), axis);
    dispatch<ActivationTypes>(x.dtype(), kOp, [&]<typename T>() {
      const T* px = x.data<T>();
      int32_t* py = y.data<int32_t>();
      for (int64_t o = 0; o < v.outer; ++o) {
        for (int64_t i = 0; i < v.inner; ++i) {
          const T* row = px + o * v.extent * v.inner + i;
          T best_value = row[0];
          int32_t best = 0;
          for (int64_t k = 1; k < v.extent; ++k) {
            if (kMin ? row[k * v.inner] < best_value : row[k * v.inner] > best_value) {
              best_value = row[k * v.inner];
              best = static_cast<int32_t>(k);
            }
          }
          py[o * v.inner + i] = best;
        }
      }
    });
  }

 private:
  int64_t axis_;
  int64_t keepdims_;
};

// ---------------------------------------------------------------------------------------------
// HzQuantizedSoftmax: integer softmax along `axis` (simulator::softmax_row) to `output_type`. The multipliers come from the node (the quantizer computed them once from the scales),
// so this kernel and the virtual BPU's kSoftmax read the same integers.

class QuantizedSoftmaxKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzQuantizedSoftmax";

  explicit QuantizedSoftmaxKernel(const NodeInfo& node)
      : axis_(node.attrs.get_int("axis")),
        output_type_(horizon::read_output_type(kOp, node.attrs, false)),
        multipliers_{horizon::read_multiplier(kOp, node.attrs, "exponent_multiplier", "exponent_shift").at(0),
                     horizon::read_multiplier(kOp, node.attrs, "output_multiplier", "output_shift").at(0)} {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    check_activation_type(kOp, "x", x.dtype(), x.describe());
    OPENBPU_CHECK(x.rank() >= 1, kOp, ": x must have rank >= 1, got ", x.describe());
    const int64_t axis = normalize_axis(axis_, x.rank(), "HzQuantizedSoftmax: axis");
    Tensor& y = ctx.allocate_output(0, output_type_, x.shape());
    const AxisView v = view_around(x.shape(), axis);
    if (v.extent == 0) return;
    dispatch<ActivationTypes>(x.dtype(), kOp, [&]<typename TX>() {
      dispatch<ActivationTypes>(output_type_, kOp, [&]<typename TY>() {
        const TX* px = x.data<TX>();
        TY* py = y.data<TY>();
        // Rows are independent: split them over the pool; each thread keeps its rows' e_k in
        // a scratch row that grows once, so steady-state inference allocates nothing here.
        const int64_t chunk = std::max<int64_t>(1, kElementwiseChunk / 4 / v.extent);
        parallel_for(ctx.thread_pool(), v.outer * v.inner, chunk, [&](int64_t b, int64_t e) {
          thread_local std::vector<int32_t> exps;
          if (exps.size() < static_cast<size_t>(v.extent)) exps.resize(static_cast<size_t>(v.extent));
          for (int64_t row = b; row < e; ++row) {
            const int64_t base = (row / v.inner) * v.extent * v.inner + row % v.inner;
            simulator::softmax_row<TY>(
                v.extent, multipliers_, exps.data(), [&](int64_t k) { return int64_t{px[base + k * v.inner]}; },
                [&](int64_t k, TY value) { py[base + k * v.inner] = value; });
          }
        });
      });
    });
  }

 private:
  int64_t axis_;
  DataType output_type_;
  simulator::SoftmaxMultipliers multipliers_;
};

}  // namespace

void register_horizon_quantized_axis_kernels(std::vector<KernelDef>& defs) {
  for (const bool min : {false, true}) {
    defs.push_back({"horizon", min ? "HzQuantizedArgMin" : "HzQuantizedArgMax", 1,
                    {{"axis", AttrKind::kInt}, {"keepdims", AttrKind::kInt}, {"input_scale", AttrKind::kFloat}},
                    min ? &make_kernel<QuantizedArgExtremeKernel<true>> : &make_kernel<QuantizedArgExtremeKernel<false>>});
  }
  defs.push_back({"horizon", "HzQuantizedSoftmax", 1,
                  {{"axis", AttrKind::kInt, true},
                   {"output_type", AttrKind::kString, true},
                   {"exponent_multiplier", AttrKind::kInt, true},
                   {"exponent_shift", AttrKind::kInt, true},
                   {"output_multiplier", AttrKind::kInt, true},
                   {"output_shift", AttrKind::kInt, true},
                   {"input_scale", AttrKind::kFloat},
                   {"output_scale", AttrKind::kFloat}},
                  &make_kernel<QuantizedSoftmaxKernel>});
}

}  // namespace openbpu::kernels
