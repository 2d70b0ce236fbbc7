// dynamic_quantization_removal on text graphs: ONNX Runtime's quantize_dynamic pattern back to
// float operators with dequantized weights.
#include "pass_test_support.h"

namespace openbpu::passes {
namespace {

using testing::run_pass;

TEST(DynamicQuantizationRemoval, ConvIntegerWithPerChannelWeightsBecomesAConv) {
  const auto run = run_pass(
      "graph g (%x: float32[1,2,4,4]) -> (%y) {\n"
      "  init %wq: int8[3,2,1,1]{10,-20,30,-40,50,-60}\n"
      "  init %wz: int8[3]{0,0,0}\n"
      "  init %ws: float32[3,1,1]{0.5,0.25,0.125}\n"
      "  init %b: float32[3,1,1]{1,2,3}\n"
      "  %q, %s, %z = DynamicQuantizeLinear(%x)\n"
      "  %sw = Mul(%s, %ws)\n"
      "  %ci = ConvInteger[kernel_shape=[1,1]](%q, %wq, %z, %wz)\n"
      "  %cf = Cast[to=1](%ci)\n"
      "  %m = Mul(%cf, %sw)\n"
      "  %y = Add(%m, %b)\n"
      "}\n",
      "dynamic_quantization_removal");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,2,4,4]) -> (%y) {\n"
            "  init %b: float32[3,1,1]{1,2,3}\n"
            "  init %ci.weight: float32[3,2,1,1]{5,-10,7.5,-10,6.25,-7.5}\n"
            "  %m = Conv[kernel_shape=[1,1]](%x, %ci.weight)\n"
            "  %y = Add(%m, %b)\n"
            "}\n");
  EXPECT_EQ(run.rewrites, 1);
  // The original quantizes x to uint8 on the fly: the float graph differs by that rounding.
  EXPECT_LT(run.difference, 0.02);
}

TEST(DynamicQuantizationRemoval, MatMulIntegerWithAWeightZeroPointBecomesAMatMul) {
  const auto run = run_pass(
      "graph g (%x: float32[2,3]) -> (%y) {\n"
      "  init %wq: uint8[3,2]{130,120,128,140,100,128}\n"
      "  init %wz: uint8[]{128}\n"
      "  init %ws: float32[]{0.5}\n"
      "  %q, %s, %z = DynamicQuantizeLinear(%x)\n"
      "  %mi = MatMulInteger(%q, %wq, %z, %wz)\n"
      "  %mf = Cast[to=1](%mi)\n"
      "  %sw = Mul(%ws, %s)\n"
      "  %y = Mul(%mf, %sw)\n"
      "}\n",
      "dynamic_quantization_removal");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2,3]) -> (%y) {\n"
            "  init %mi.weight: float32[3,2]{1,-4,0,6,-14,0}\n"
            "  %y = MatMul(%x, %mi.weight)\n"
            "}\n");
  EXPECT_LT(run.difference, 0.02);
}

TEST(DynamicQuantizationRemoval, MustNotFire) {
  // The scale is not the DynamicQuantizeLinear's times a constant; the Cast is not to float;
  // the weight is computed.
  const std::string text =
      "graph g (%x: float32[2,3], %k: float32[]) -> (%y, %v, %u) {\n"
      "  init %wq: int8[3,2]{1,2,3,4,5,6}\n"
      "  init %ws: float32[]{0.5}\n"
      "  %q, %s, %z = DynamicQuantizeLinear(%x)\n"
      "  %mi = MatMulInteger(%q, %wq, %z)\n"
      "  %mf = Cast[to=1](%mi)\n"
      "  %y = Mul(%mf, %k)\n"
      "  %md = Cast[to=11](%mi)\n"
      "  %sw = Mul(%s, %ws)\n"
      "  %swd = Cast[to=11](%sw)\n"
      "  %v = Mul(%md, %swd)\n"
      "  %w2 = Cast[to=3](%x)\n"
      "  %mi2 = MatMulInteger(%q, %w2, %z)\n"
      "  %mf2 = Cast[to=1](%mi2)\n"
      "  %u = Mul(%mf2, %sw)\n"
      "}\n";
  testing::expect_unchanged(text, "dynamic_quantization_removal");
}

}  // namespace
}  // namespace openbpu::passes
