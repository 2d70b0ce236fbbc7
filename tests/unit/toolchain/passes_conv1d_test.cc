// conv1d_as_conv2d on text graphs: 1-D convolutions and poolings run as 2-D ones over H = 1.
#include "pass_test_support.h"

namespace openbpu::passes {
namespace {

using testing::run_pass;

TEST(Conv1dAsConv2d, AConvAndAPoolOverLengthBecome2D) {
  const auto run = run_pass(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%x: float32[1,2,16]) -> (%y) {\n"
      "  init %w: float32[3,2,5] uniform(-1, 1)\n"
      "  init %b: float32[3] uniform(-1, 1)\n"
      "  %c: float32[1,3,8] = Conv[kernel_shape=[5], strides=[2], pads=[2,2], dilations=[1]](%x, %w, %b)\n"
      "  %y: float32[1,3,4] = MaxPool[kernel_shape=[2], strides=[2]](%c)\n"
      "}\n",
      "conv1d_as_conv2d");
  EXPECT_EQ(run.rewrites, 2);
  EXPECT_EQ(run.difference, 0);
  // The Squeeze / Unsqueeze pair between the two goes in reshape_transpose_cancellation.
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,2,16]) -> (%y) {\n"
            "  init %b: float32[3]{-0.9536172,-0.1068278,-0.008195525}\n"
            "  init %c.in2d.axes: int64[1]{2}\n"
            "  init %c.weight2d: float32[3,2,1,5]\n"
            "  init %c.out1d.axes: int64[1]{2}\n"
            "  init %y.in2d.axes: int64[1]{2}\n"
            "  init %y.out1d.axes: int64[1]{2}\n"
            "  %c.in2d = Unsqueeze(%x, %c.in2d.axes)\n"
            "  %c.out2d = Conv[kernel_shape=[1,5], strides=[1,2], pads=[0,2,0,2], dilations=[1,1]](%c.in2d, %c.weight2d, %b)\n"
            "  %c = Squeeze(%c.out2d, %c.out1d.axes)\n"
            "  %y.in2d = Unsqueeze(%c, %y.in2d.axes)\n"
            "  %y.out2d = MaxPool[kernel_shape=[1,2], strides=[1,2]](%y.in2d)\n"
            "  %y = Squeeze(%y.out2d, %y.out1d.axes)\n"
            "}\n");
}

TEST(Conv1dAsConv2d, MustNotFire) {
  // A 2-D convolution; a 1-D one whose weight is computed.
  const std::string text =
      "graph g (%x: float32[1,2,8,8], %s: float32[1,2,16], %v: float32[3,2,5]) -> (%y, %z) {\n"
      "  init %w: float32[3,2,3,3] uniform(-1, 1)\n"
      "  %y = Conv[kernel_shape=[3,3]](%x, %w)\n"
      "  %z = Conv[kernel_shape=[5]](%s, %v)\n"
      "}\n";
  testing::expect_unchanged(text, "conv1d_as_conv2d");
}

}  // namespace
}  // namespace openbpu::passes
