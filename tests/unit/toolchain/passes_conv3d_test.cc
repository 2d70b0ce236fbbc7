// conv3d_as_conv2d on text graphs: a 3-D convolution as one 2-D convolution per depth tap over
// [N·D, C, H, W], summed; the outputs stay those of the 3-D one.
#include "pass_test_support.h"

namespace openbpu::passes {
namespace {

using testing::run_pass;

int count(const std::string& dump, const std::string& op) {
  int n = 0;
  for (size_t at = dump.find(" = " + op); at != std::string::npos; at = dump.find(" = " + op, at + 1)) ++n;
  return n;
}

TEST(Conv3dAsConv2d, OneConvPerDepthTapSummed) {
  // Depth: 6 frames padded by 1, kernel 3, stride 2 → 3 output depths; H and W padded, strided.
  const auto run = run_pass(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%x: float32[2,3,6,8,8]) -> (%y) {\n"
      "  init %w: float32[4,3,3,3,3] uniform(-1, 1)\n"
      "  init %b: float32[4] uniform(-1, 1)\n"
      "  %y: float32[2,4,3,4,4] = Conv[kernel_shape=[3,3,3], strides=[2,2,2], pads=[1,1,1,1,1,1]](%x, %w, %b)\n"
      "}\n",
      "conv3d_as_conv2d");
  EXPECT_EQ(run.rewrites, 1);
  EXPECT_LT(run.difference, testing::kFloatTolerance);
  EXPECT_EQ(count(run.dump, "Conv["), 3) << run.dump;
  EXPECT_EQ(count(run.dump, "Add("), 2) << run.dump;
  EXPECT_EQ(count(run.dump, "Pad("), 1) << run.dump;
  EXPECT_NE(run.dump.find("%y.tap0 = Conv[strides=[2,2], dilations=[1,1], pads=[1,1,1,1], group=1, kernel_shape=[3,3]]"
                          "(%y.tap0.batch, %y.tap0.weight, %b)"),
            std::string::npos)
      << run.dump;
  EXPECT_NE(run.dump.find("%y = Transpose[perm=[0,2,1,3,4]](%y.depth_major_out)"), std::string::npos) << run.dump;
}

TEST(Conv3dAsConv2d, DilatedGroupedAndValid) {
  const auto run = run_pass(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%x: float32[1,4,7,5,5]) -> (%y) {\n"
      "  init %w: float32[6,2,2,1,3] uniform(-1, 1)\n"
      "  %y: float32[1,6,5,5,3] = Conv[kernel_shape=[2,1,3], dilations=[2,1,1], group=2, auto_pad=\"VALID\"](%x, %w)\n"
      "}\n",
      "conv3d_as_conv2d");
  EXPECT_EQ(run.rewrites, 1);
  EXPECT_LT(run.difference, testing::kFloatTolerance);
  EXPECT_EQ(count(run.dump, "Conv["), 2) << run.dump;
  EXPECT_EQ(count(run.dump, "Pad("), 0) << run.dump;
}

TEST(Conv3dAsConv2d, MustNotFire) {
  // A 2-D convolution; a 3-D one whose weight is computed; one with SAME padding; one whose
  // input shape is unknown.
  const std::string text =
      "graph g (%x: float32[1,2,8,8], %v: float32[1,2,4,8,8], %wv: float32[3,2,3,3,3], %u: float32[1,2,?,8,8])"
      " -> (%y, %z, %s, %t) {\n"
      "  init %w: float32[3,2,3,3] uniform(-1, 1)\n"
      "  init %w3: float32[3,2,3,3,3] uniform(-1, 1)\n"
      "  %y = Conv[kernel_shape=[3,3]](%x, %w)\n"
      "  %z = Conv[kernel_shape=[3,3,3]](%v, %wv)\n"
      "  %s = Conv[kernel_shape=[3,3,3], auto_pad=\"SAME_UPPER\"](%v, %w3)\n"
      "  %t = Conv[kernel_shape=[3,3,3]](%u, %w3)\n"
      "}\n";
  testing::expect_unchanged(text, "conv3d_as_conv2d");
}

}  // namespace
}  // namespace openbpu::passes
