// HzQuantizedResizeUpsample (docs/quantized_ops.md): integer resizing of N x C x H x W int8/int16
// tensors to output_size. The source coordinate of each output index is the rational number the
// ONNX coordinate transformation gives for the scale output/input length; nearest rounds it
// exactly (pure selection), linear takes it in fixed point with 10 fractional bits
// (simulator::resize_linear_coordinate) and blends the four neighbours with integer weights.
#include <algorithm>
#include <string>

#include "families.h"
#include "horizon_attributes.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/quantized_tables.h"

namespace openbpu::kernels {

namespace {

namespace sim = openbpu::simulator;
using horizon::check_activation_type;

using ActivationTypes = TypeList<int8_t, int16_t>;

constexpr std::string_view kOp = "HzQuantizedResizeUpsample";

class QuantizedResizeKernel final : public Kernel {
 public:
  explicit QuantizedResizeKernel(const NodeInfo& node) {
    const std::string mode = node.attrs.get_string("mode", "nearest");
    OPENBPU_CHECK(mode == "nearest" || mode == "linear", kOp,
                  ": mode must be \"nearest\" or \"linear\", got \"", mode, "\"");
    mode_ = mode;
    coordinates_ = node.attrs.get_string("coordinate_transformation_mode", "half_pixel");
    rounding_ = node.attrs.get_string("nearest_mode", "round_prefer_floor");
    quantized_resize_axis(mode_, coordinates_, rounding_, 1, 1);  // rejects unknown modes now
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
      const ResizeAxisTable ay = quantized_resize_axis(mode_, coordinates_, rounding_, in_h, out_h);
      const ResizeAxisTable ax = quantized_resize_axis(mode_, coordinates_, rounding_, in_w, out_w);
      if (mode_ == "nearest") {
        parallel_for(ctx.thread_pool(), planes, 1, [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            const T* in = px + p * in_h * in_w;
            T* out = py + p * out_h * out_w;
            for (int64_t oh = 0; oh < out_h; ++oh) {
              const T* row = in + ay.i0[size_t(oh)] * in_w;
              for (int64_t ow = 0; ow < out_w; ++ow) out[oh * out_w + ow] = row[ax.i0[size_t(ow)]];
            }
          }
        });
        return;
      }
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
  std::string mode_;
  std::string coordinates_;
  std::string rounding_;
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
