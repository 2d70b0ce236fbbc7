// Horizon-domain integer convolutions (docs/quantized_ops.md): HzSQuantizedConv and
// HzSQuantizedConvTranspose. Attributes are validated once at prepare; the arithmetic lives in
// quantized_convolution.h (reference loop and optimized path, bit-identical).
#include <string_view>

#include "families.h"
#include "horizon_attributes.h"
#include "openbpu/kernels/convolution.h"
#include "openbpu/kernels/quantized_convolution.h"

namespace openbpu::kernels {

namespace {

using horizon::check_activation_type;

// The attributes both operators share.
std::vector<AttrSpec> quantized_conv_attributes() {
  return {{"kernel_shape", AttrKind::kInts}, {"strides", AttrKind::kInts},
          {"pads", AttrKind::kInts},         {"dilations", AttrKind::kInts},
          {"group", AttrKind::kInt},         {"output_type", AttrKind::kString, true},
          {"multipliers", AttrKind::kInts},  {"shifts", AttrKind::kInts},
          {"clip_min", AttrKind::kInt},      {"clip_max", AttrKind::kInt},
          {"input_scale", AttrKind::kFloat}, {"weight_scales", AttrKind::kFloats},
          {"output_scale", AttrKind::kFloat}};
}

// Output type, requantization multipliers and clamp of either operator.
QuantizedConvOutputStage read_output_stage(std::string_view op, const AttributeMap& attrs) {
  QuantizedConvOutputStage stage;
  stage.output_type = horizon::read_output_type(op, attrs, true);
  stage.multipliers = horizon::read_multipliers(op, attrs, "multipliers", "shifts");
  if (stage.output_type == DataType::kInt32) {
    OPENBPU_CHECK(stage.multipliers.empty(), op,
                  ": multipliers and shifts must be absent for output_type \"int32\" (the "
                  "accumulator is the output)");
  } else {
    OPENBPU_CHECK(!stage.multipliers.empty(), op,
                  ": multipliers and shifts (one per output channel) are required for output_type "
                  "int8/int16");
  }
  const horizon::Clamp clamp = horizon::read_clamp(op, attrs, stage.output_type);
  stage.clip_min = clamp.lo;
  stage.clip_max = clamp.hi;
  return stage;
}

int64_t read_group(std::string_view op, const AttributeMap& attrs) {
  const int64_t group = attrs.get_int("group", 1);
  OPENBPU_CHECK(group > 0, op, ": group must be > 0, got ", group);
  return group;
}

// Checks x, w and b against each other and the stage's per-channel parameters.
void check_operands(std::string_view op, const Tensor& x, const Tensor& w, const Tensor* b,
                    const ConvGeometry& g, const QuantizedConvOutputStage& stage) {
  check_activation_type(op, "x", x.dtype(), x.describe());
  OPENBPU_CHECK(w.dtype() == DataType::kInt8, op, ": w must be int8, got ", w.describe());
  if (b != nullptr) {
    OPENBPU_CHECK(b->dtype() == DataType::kInt32 && b->rank() == 1 && b->dim(0) == g.out_channels,
                  op, ": b must be int32 [", g.out_channels, "] (one per output channel), got ",
                  b->describe());
  }
  if (stage.output_type != DataType::kInt32) {
    OPENBPU_CHECK(static_cast<int64_t>(stage.multipliers.size()) == g.out_channels, op,
                  ": multipliers/shifts have ", stage.multipliers.size(),
                  " entries but the convolution has ", g.out_channels,
                  " output channels (one each)");
  }
}

Shape output_shape(const ConvGeometry& g) {
  Shape s{g.batch, g.out_channels};
  s.insert(s.end(), g.window.out.begin(), g.window.out.end());
  return s;
}

class QuantizedConvKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzSQuantizedConv";

  explicit QuantizedConvKernel(const NodeInfo& node)
      : window_(WindowAttributes::read(kOp, node.attrs)),
        group_(read_group(kOp, node.attrs)),
        stage_(read_output_stage(kOp, node.attrs)) {
    stage_.residual_multipliers =
        horizon::read_multipliers(kOp, node.attrs, "residual_multipliers", "residual_shifts");
    OPENBPU_CHECK(node.input_count >= 2 && node.input_count <= 4, kOp,
                  ": takes inputs x, w, b (optional) and r (optional), got ", node.input_count);
    // Constant weights are packed for the GEMM once; used only for that storage (as Conv does).
    const Tensor* w = node.constant_inputs.size() > 1 ? node.constant_inputs[1] : nullptr;
    if (w != nullptr) {
      packed_ = pack_quantized_conv_weights(*w, group_);
      if (!packed_.empty()) packed_from_ = *w;
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* b = ctx.optional_input(2);
    const Tensor* r = ctx.optional_input(3);
    const ConvGeometry g = conv_geometry(kOp, window_, group_, x.shape(), w.shape());
    check_operands(kOp, x, w, b, g, stage_);
    const Shape y_shape = output_shape(g);
    if (r != nullptr) {
      check_activation_type(kOp, "r", r->dtype(), r->describe());
      OPENBPU_CHECK(r->shape() == y_shape, kOp, ": the residual r must have the output's shape ",
                    shape_to_string(y_shape), ", got ", r->describe());
      OPENBPU_CHECK(static_cast<int64_t>(stage_.residual_multipliers.size()) == g.out_channels, kOp,
                    ": with a residual input, residual_multipliers/residual_shifts need ",
                    g.out_channels, " entries (one per output channel), got ",
                    stage_.residual_multipliers.size());
    } else {
      OPENBPU_CHECK(stage_.residual_multipliers.empty(), kOp,
                    ": residual_multipliers/residual_shifts are given but the residual input r is "
                    "absent");
    }
    Tensor& y = ctx.allocate_output_for_overwrite(0, stage_.output_type, y_shape);
    if (y.element_count() == 0) return;
    QuantizedConvOperands operands{&x, w.data<int8_t>(),
                                   b != nullptr ? b->data<int32_t>() : nullptr, r, &y};
    if (!packed_.empty() && w.buffer() == packed_from_.buffer() &&
        w.byte_offset() == packed_from_.byte_offset() && w.shape() == packed_from_.shape()) {
      operands.packed_weights = packed_;
    }
    quantized_conv(g, operands, stage_, ctx.thread_pool());
  }

 private:
  WindowAttributes window_;
  int64_t group_;
  QuantizedConvOutputStage stage_;
  std::vector<PackedIntGemmLhs> packed_;  // per group, from the constant weights packed_from_
  Tensor packed_from_;
};

class QuantizedConvTransposeKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzSQuantizedConvTranspose";

  explicit QuantizedConvTransposeKernel(const NodeInfo& node)
      : window_(WindowAttributes::read(kOp, node.attrs)),
        group_(read_group(kOp, node.attrs)),
        output_padding_(node.attrs.get_ints("output_padding", {})),
        stage_(read_output_stage(kOp, node.attrs)) {
    OPENBPU_CHECK(node.input_count >= 2 && node.input_count <= 3, kOp,
                  ": takes inputs x, w and b (optional), got ", node.input_count);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* b = ctx.optional_input(2);
    const ConvGeometry g =
        conv_transpose_geometry(window_, group_, output_padding_, {}, x.shape(), w.shape());
    check_operands(kOp, x, w, b, g, stage_);
    Tensor& y = ctx.allocate_output(0, stage_.output_type, output_shape(g));
    if (y.element_count() == 0) return;
    const QuantizedConvOperands operands{&x, w.data<int8_t>(),
                                         b != nullptr ? b->data<int32_t>() : nullptr, nullptr, &y};
    quantized_conv_transpose(g, operands, stage_, ctx.thread_pool());
  }

 private:
  WindowAttributes window_;
  int64_t group_;
  std::vector<int64_t> output_padding_;
  QuantizedConvOutputStage stage_;
};

}  // namespace

void register_horizon_quantized_conv_kernels(std::vector<KernelDef>& defs) {
  std::vector<AttrSpec> conv = quantized_conv_attributes();
  conv.push_back({"residual_multipliers", AttrKind::kInts});
  conv.push_back({"residual_shifts", AttrKind::kInts});
  conv.push_back({"residual_scale", AttrKind::kFloat});
  defs.push_back({"horizon", "HzSQuantizedConv", 1, conv, &make_kernel<QuantizedConvKernel>});
  std::vector<AttrSpec> transpose = quantized_conv_attributes();
  transpose.push_back({"output_padding", AttrKind::kInts});
  defs.push_back({"horizon", "HzSQuantizedConvTranspose", 1, transpose,
                  &make_kernel<QuantizedConvTransposeKernel>});
}

}  // namespace openbpu::kernels
