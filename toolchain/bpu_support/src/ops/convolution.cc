// Convolutions and matrix products: accumulating anchors with per-channel weight scales.
#include "../op_rules.h"
#include "families.h"

namespace openbpu::bpu_support::ops {

using namespace rules;  // NOLINT(google-build-using-namespace): the rule vocabulary

namespace {

std::vector<Constraint> conv_constraints() {
  return {
      rank_is("conv.rank", 4, "input must be 4-D (N, C, H, W); stage 2 makes 1-D and 3-D ones 2-D"),
      input_constant("conv.weight", 1, "W"),
      input_constant("conv.bias", 2, "B"),
      kernel_size("conv.kernel", &MarchSpec::conv_kernel_max, "kernel"),
      strides_in_range("conv.stride", &MarchSpec::conv_stride_max),
      {"conv.dilation",
       [](const MarchSpec& m) { return "dilation must be in " + range(1, m.conv_dilation_max); },
       [](const Node& n, const MarchSpec& m) {
         return all_in(ints_attr(n, "dilations", {1, 1}), 1, m.conv_dilation_max);
       }},
      pads_in_range("conv.pads"),
      channels_per_group("conv.channels", false),
      dims_within_limit(),
  };
}

// The output-channel axis of the constant weight (input 1).
int conv_weight_axis(const Node&) { return 0; }
int conv_transpose_weight_axis(const Node&) { return 1; }
int gemm_weight_axis(const Node& n) { return int_attr(n, "transB", 0) != 0 ? 0 : 1; }
// B is [..., K, N]: N, the last axis.
int matmul_weight_axis(const Node& n) {
  const ir::Value* b = n.input(1);
  const size_t rank = b != nullptr && b->type().has_rank() ? b->type().shape->size() : 0;
  return rank >= 2 ? static_cast<int>(rank - 1) : -1;
}

}  // namespace

void add_convolutions(std::vector<OpDef>& registry) {
  registry.push_back({.op_type = "Conv", .bpu_type = "HzSQuantizedConv", .kind = OpKind::kCompute,
                      .quantize = QuantizeAs::kConv, .lower = LowerAs::kConv,
                      .constraints = conv_constraints(),
                      .note = "2-D convolution with bias, fused residual Add and ReLU/Clip",
                      .absorbs_residual_add = true, .weight_axis = conv_weight_axis});
  // The input preprocessing that stage 1 inserts (domain horizon): a 1x1 convolution.
  registry.push_back({.op_type = "HzPreprocess", .bpu_type = "HzSQuantizedPreprocess",
                      .kind = OpKind::kCompute, .quantize = QuantizeAs::kPreprocess,
                      .lower = LowerAs::kConv, .constraints = {dims_within_limit()},
                      .note = "horizon-domain input preprocessing: colour conversion, mean and scale",
                      .int16 = false});
  registry.push_back(
      {.op_type = "ConvTranspose", .bpu_type = "HzSQuantizedConvTranspose", .kind = OpKind::kCompute,
       .quantize = QuantizeAs::kConv, .lower = LowerAs::kConvTranspose,
       .constraints = {rank_is("deconv.rank", 4, "input must be 4-D (N, C, H, W)"),
                       input_constant("deconv.weight", 1, "W"), input_constant("deconv.bias", 2, "B"),
                       kernel_size("deconv.kernel", &MarchSpec::conv_transpose_kernel_max, "kernel"),
                       strides_in_range("deconv.stride", &MarchSpec::conv_transpose_kernel_max),
                       {"deconv.dilation", [](const MarchSpec&) { return std::string("dilation must be 1"); },
                        [](const Node& n, const MarchSpec&) { return all_in(ints_attr(n, "dilations", {1, 1}), 1, 1); }},
                       channels_per_group("deconv.channels", true), dims_within_limit()},
       .note = "transposed 2-D convolution", .weight_axis = conv_transpose_weight_axis});
  registry.push_back({.op_type = "Gemm", .bpu_type = "HzSQuantizedConv", .kind = OpKind::kCompute,
                      .quantize = QuantizeAs::kGemm, .lower = LowerAs::kConv,
                      .constraints = {input_constant("gemm.weight", 1, "B"), input_constant("gemm.bias", 2, "C"),
                                      attr_equals("gemm.trans_a", "transA", 0, 0),
                                      rank_is("gemm.rank", 2, "A must be 2-D"), dims_within_limit()},
                      .note = "lowered to a 1x1 convolution", .weight_axis = gemm_weight_axis});
  registry.push_back({.op_type = "MatMul", .bpu_type = "HzSQuantizedMatmul", .kind = OpKind::kCompute,
                      .quantize = QuantizeAs::kMatMul, .lower = LowerAs::kMatMul,
                      .constraints = {rank_between("matmul.rank", 2, 4, 2), dims_within_limit()},
                      .note = "featuremap x featuremap, or x constant (as a 1x1 convolution)",
                      .weight_axis = matmul_weight_axis});
}

}  // namespace openbpu::bpu_support::ops
