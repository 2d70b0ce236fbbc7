// fuse_conv_affine, fuse_batchnorm, gemm_to_conv, matmul_to_conv on text graphs.
#include "pass_test_support.h"

namespace openbpu::passes {
namespace {

using testing::normalized;
using testing::kFloatTolerance;
using testing::run_pass;

TEST(FuseConvAffine, PerChannelMulAndAddFoldIntoTheConv) {
  const auto run = run_pass(
      "graph g (%x: float32[1,3,8,8]) -> (%y) {\n"
      "  init %w: float32[12,3,3,3]\n"
      "  init %b: float32[12]\n"
      "  init %s: float32[1,12,1,1]\n"
      "  init %t: float32[12,1,1]\n"
      "  %c = Conv[kernel_shape=[3,3], pads=[1,1,1,1]](%x, %w, %b)\n"
      "  %m = Mul(%s, %c)\n"
      "  %y = Add(%m, %t)\n"
      "}\n",
      "fuse_conv_affine");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,3,8,8]) -> (%y) {\n"
            "  init %m.weight: float32[12,3,3,3]\n"
            "  init %m.bias: float32[12]\n"
            "  %y = Conv[kernel_shape=[3,3], pads=[1,1,1,1]](%x, %m.weight, %m.bias)\n"
            "}\n");
  EXPECT_EQ(run.rewrites, 2);
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(FuseConvAffine, ConvTransposeBiasAddAndScalarDivFold) {
  const auto run = run_pass(
      "graph g (%x: float32[1,4,5,5]) -> (%y) {\n"
      "  init %w: float32[4,5,2,2]\n"
      "  init %bias: float32[1,10,1,1]\n"
      "  init %d: float32[1]{4}\n"
      "  %c = ConvTranspose[group=2, kernel_shape=[2,2], strides=[2,2]](%x, %w)\n"
      "  %a = Add(%c, %bias)\n"
      "  %y = Div(%a, %d)\n"
      "}\n",
      "fuse_conv_affine");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,4,5,5]) -> (%y) {\n"
            "  init %a.weight: float32[4,5,2,2]\n"
            "  init %a.bias: float32[10]\n"
            "  %y = ConvTranspose[group=2, kernel_shape=[2,2], strides=[2,2]](%x, %a.weight, "
            "%a.bias)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(FuseConvAffine, MustNotFire) {
  // The Conv result has another use; the constant varies along W; constant − conv; a computed
  // weight; a constant that would broadcast the output to a larger shape.
  const std::string text =
      "graph g (%x: float32[1,2,4,4], %wx: float32[2,2,1,1]) -> (%a, %b, %c, %d, %e, %k) {\n"
      "  init %w: float32[2,2,1,1]\n"
      "  init %row: float32[4]\n"
      "  init %s: float32[2,1,1]\n"
      "  init %big: float32[3,2,1,1]\n"
      "  %k = Conv(%x, %w)\n"
      "  %a = Mul(%k, %s)\n"
      "  %k2 = Conv(%x, %w)\n"
      "  %b = Mul(%k2, %row)\n"
      "  %k3 = Conv(%x, %w)\n"
      "  %c = Sub(%s, %k3)\n"
      "  %k4 = Conv(%x, %wx)\n"
      "  %d = Mul(%k4, %s)\n"
      "  %k5 = Conv(%x, %w)\n"
      "  %e = Add(%k5, %big)\n"
      "}\n";
  const auto run = run_pass(text, "fuse_conv_affine");
  EXPECT_EQ(run.rewrites, 0);
  EXPECT_EQ(run.dump, normalized(text));
}

TEST(FuseConvAffine, AnAffineMapBeforeAPaddingFreeConvFoldsIntoIt) {
  const auto run = run_pass(
      "graph g (%x: float32[1,12,6,6]) -> (%y) {\n"
      "  init %s: float32[12,1,1] uniform(0.5, 2)\n"
      "  init %t: float32[1,12,1,1]\n"
      "  init %w: float32[10,12,3,3]\n"
      "  %h = Relu(%x)\n"
      "  %m = Mul(%h, %s)\n"
      "  %a = Sub(%m, %t)\n"
      "  %y = Conv[kernel_shape=[3,3], strides=[2,2]](%a, %w)\n"
      "}\n",
      "fuse_conv_affine");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,12,6,6]) -> (%y) {\n"
            "  init %y.weight: float32[10,12,3,3]\n"
            "  init %y.bias: float32[10]\n"
            "  %h = Relu(%x)\n"
            "  %y = Conv[kernel_shape=[3,3], strides=[2,2]](%h, %y.weight, %y.bias)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(FuseConvAffine, WithPaddingOnlyTheScaleMovesIntoAGroupedConv) {
  const auto run = run_pass(
      "graph g (%x: float32[1,12,6,6]) -> (%y) {\n"
      "  init %s: float32[1] {1.5}\n"
      "  init %t: float32[1] {0.25}\n"
      "  init %w: float32[12,4,3,3]\n"
      "  %h = Relu(%x)\n"
      "  %m = Mul(%s, %h)\n"
      "  %a = Add(%m, %t)\n"
      "  %y = Conv[group=3, kernel_shape=[3,3], pads=[1,1,1,1]](%a, %w)\n"
      "}\n",
      "fuse_conv_affine");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,12,6,6]) -> (%y) {\n"
            "  init %y.weight: float32[12,4,3,3]\n"
            "  init %y.bias: float32[12]\n"
            "  init %y.shift: float32[12,1,1]\n"
            "  %h = Relu(%x)\n"
            "  %a = Add(%h, %y.shift)\n"
            "  %y = Conv[group=3, kernel_shape=[3,3], pads=[1,1,1,1]](%a, %y.weight, %y.bias)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(FuseConvAffine, LayerNormGammaAndBetaFoldIntoTheNextLinearLayer) {
  // matmul_to_conv's rows form: [1,5,12] → Reshape [5,12,1,1] → Conv.
  const auto run = run_pass(
      "graph g (%x: float32[1,5,12]) -> (%y) {\n"
      "  init %gamma: float32[12]\n"
      "  init %beta: float32[12]\n"
      "  init %rows: int64[4]{-1,12,1,1}\n"
      "  init %w: float32[10,12,1,1]\n"
      "  init %b: float32[10]\n"
      "  %n = Relu(%x)\n"
      "  %m = Mul(%n, %gamma)\n"
      "  %a: float32[1,5,12] = Add(%m, %beta)\n"
      "  %r: float32[5,12,1,1] = Reshape(%a, %rows)\n"
      "  %y = Conv[kernel_shape=[1,1]](%r, %w, %b)\n"
      "}\n",
      "fuse_conv_affine");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,5,12]) -> (%y) {\n"
            "  init %rows: int64[4]{-1,12,1,1}\n"
            "  init %y.weight: float32[10,12,1,1]\n"
            "  init %y.bias: float32[10]\n"
            "  %n = Relu(%x)\n"
            "  %r = Reshape(%n, %rows)\n"
            "  %y = Conv[kernel_shape=[1,1]](%r, %y.weight, %y.bias)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(FuseConvAffine, AnAffineMapBeforeAConvMustNotFoldWhen) {
  // Its result is used twice; the shift varies along H; a shift-only map before a padded Conv;
  // a scale with a zero before a padded Conv (t/s undefined); a ConvTranspose.
  const std::string text =
      "graph g (%x: float32[1,12,4,4]) -> (%y1, %y2, %a1, %y3, %y4, %y5) {\n"
      "  init %s: float32[12,1,1]\n"
      "  init %z: float32[12,1,1]{0,1,1,1,1,1,1,1,1,1,1,1}\n"
      "  init %th: float32[4,1]\n"
      "  init %t: float32[12,1,1]\n"
      "  init %w: float32[10,12,1,1]\n"
      "  init %wt: float32[12,10,1,1]\n"
      "  %h = Relu(%x)\n"
      "  %a1 = Add(%h, %t)\n"
      "  %y1 = Conv(%a1, %w)\n"
      "  %a2 = Add(%h, %th)\n"
      "  %y2 = Conv(%a2, %w)\n"
      "  %a3 = Add(%h, %t)\n"
      "  %y3 = Conv[pads=[1,1,1,1]](%a3, %w)\n"
      "  %m4 = Mul(%h, %z)\n"
      "  %a4 = Add(%m4, %t)\n"
      "  %y4 = Conv[pads=[1,1,1,1]](%a4, %w)\n"
      "  %a5 = Add(%h, %t)\n"
      "  %y5 = ConvTranspose(%a5, %wt)\n"
      "}\n";
  const auto run = run_pass(text, "fuse_conv_affine");
  EXPECT_EQ(run.rewrites, 0);
  EXPECT_EQ(run.dump, normalized(text));
}

TEST(FuseBatchnorm, FoldsIntoConvAndKeepsTheBatchnormOutputName) {
  const auto run = run_pass(
      "graph g (%x: float32[1,3,6,6]) -> (%y) {\n"
      "  init %w: float32[12,3,3,3]\n"
      "  init %scale: float32[12]\n"
      "  init %shift: float32[12]\n"
      "  init %mean: float32[12]\n"
      "  init %var: float32[12] uniform(0.5, 2)\n"
      "  %c = Conv[kernel_shape=[3,3]](%x, %w)\n"
      "  %bn = BatchNormalization[epsilon=0.001](%c, %scale, %shift, %mean, %var)\n"
      "  %y = Relu(%bn)\n"
      "}\n",
      "fuse_batchnorm");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,3,6,6]) -> (%y) {\n"
            "  init %c.weight: float32[12,3,3,3]\n"
            "  init %c.bias: float32[12]\n"
            "  %bn = Conv[kernel_shape=[3,3]](%x, %c.weight, %c.bias)\n"
            "  %y = Relu(%bn)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(FuseBatchnorm, FoldsIntoGroupedConvTransposeGemmAndMatMul) {
  const auto run = run_pass(
      "graph g (%x: float32[1,4,3,3], %v: float32[2,5]) -> (%y, %z, %u) {\n"
      "  init %w: float32[4,5,2,2]\n"
      "  init %s10: float32[10]\n"
      "  init %b10: float32[10]\n"
      "  init %m10: float32[10]\n"
      "  init %v10: float32[10] uniform(0.5, 2)\n"
      "  init %gb: float32[9,5]\n"
      "  init %gc: float32[9]\n"
      "  init %mb: float32[5,9]\n"
      "  init %s9: float32[9]\n"
      "  init %b9: float32[9]\n"
      "  init %m9: float32[9]\n"
      "  init %v9: float32[9] uniform(0.5, 2)\n"
      "  %c = ConvTranspose[group=2, kernel_shape=[2,2]](%x, %w)\n"
      "  %y = BatchNormalization(%c, %s10, %b10, %m10, %v10)\n"
      "  %gemm = Gemm[transB=1, alpha=0.5, beta=2](%v, %gb, %gc)\n"
      "  %z = BatchNormalization(%gemm, %s9, %b9, %m9, %v9)\n"
      "  %mm: float32[2,9] = MatMul(%v, %mb)\n"
      "  %u = BatchNormalization(%mm, %s9, %b9, %m9, %v9)\n"
      "}\n",
      "fuse_batchnorm");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,4,3,3], %v: float32[2,5]) -> (%y, %z, %u) {\n"
            "  init %c.weight: float32[4,5,2,2]\n"
            "  init %c.bias: float32[10]\n"
            "  init %z.weight: float32[9,5]\n"
            "  init %z.bias: float32[9]\n"
            "  init %u.weight: float32[5,9]\n"
            "  init %u.bias: float32[9]\n"
            "  %y = ConvTranspose[group=2, kernel_shape=[2,2]](%x, %c.weight, %c.bias)\n"
            "  %z = Gemm[transB=1, alpha=0.5, beta=1](%v, %z.weight, %z.bias)\n"
            "  %mm = MatMul(%v, %u.weight)\n"
            "  %u = Add(%mm, %u.bias)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(FuseBatchnorm, ABatchnormWithoutAFoldableProducerBecomesADepthwiseConv) {
  const std::string text =
      "graph g (%x: float32[1,9,4,4]) -> (%y) {\n"
      "  init %s: float32[9]\n"
      "  init %b: float32[9]\n"
      "  init %m: float32[9]\n"
      "  init %v: float32[9] uniform(0.5, 2)\n"
      "  %r: float32[1,9,4,4] = Relu(%x)\n"
      "  %y = BatchNormalization(%r, %s, %b, %m, %v)\n"
      "}\n";
  const auto run = run_pass(text, "fuse_batchnorm");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,9,4,4]) -> (%y) {\n"
            "  init %y.weight: float32[9,1,1,1]\n"
            "  init %y.bias: float32[9]\n"
            "  %r = Relu(%x)\n"
            "  %y = Conv[group=9, kernel_shape=[1,1]](%r, %y.weight, %y.bias)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
  const auto kept = run_pass(text, "fuse_batchnorm", {{"to_depthwise_conv", "false"}});
  EXPECT_EQ(kept.rewrites, 0);
}

TEST(FuseBatchnorm, MustNotFire) {
  // Computed statistics; the Conv output used twice and a 2-D input (no depthwise Conv form);
  // training mode.
  const std::string text =
      "model opsets=[ai.onnx:15]\n"
      "graph g (%x: float32[2,3], %m: float32[3], %f: float32[1,3,4,4]) -> (%y, %z, %t) {\n"
      "  init %s: float32[3]\n"
      "  init %b: float32[3]\n"
      "  init %v: float32[3] uniform(0.5, 2)\n"
      "  init %mc: float32[3]\n"
      "  %y = BatchNormalization(%x, %s, %b, %m, %v)\n"
      "  %z = BatchNormalization(%x, %s, %b, %mc, %v)\n"
      "  %t, %rm, %rv = BatchNormalization[training_mode=1](%f, %s, %b, %mc, %v)\n"
      "}\n";
  ir::Model model = ir::parse_model(text);
  const auto reports = run_passes(model, {{"fuse_batchnorm", {}}});
  EXPECT_EQ(reports.front().rewrites, 0);
  EXPECT_EQ(ir::dump(*model.graph), normalized(text));
}

TEST(GemmToConv, BecomesA1x1ConvBetweenReshapes) {
  const auto run = run_pass(
      "graph g (%x: float32[2,6]) -> (%y) {\n"
      "  init %b: float32[9,6]\n"
      "  init %c: float32[9]\n"
      "  %y = Gemm[transB=1, alpha=2, beta=0.5](%x, %b, %c)\n"
      "}\n",
      "gemm_to_conv", {}, true);
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2,6]) -> (%y) {\n"
            "  init %y.to_nchw: int64[4]{0,-1,1,1}\n"
            "  init %y.weight: float32[9,6,1,1]\n"
            "  init %y.bias: float32[9]\n"
            "  init %y.from_nchw: int64[2]{0,-1}\n"
            "  %y.nchw: float32[2,6,1,1] = Reshape(%x, %y.to_nchw)\n"
            "  %y.conv: float32[2,9,1,1] = Conv[kernel_shape=[1,1]](%y.nchw, %y.weight, %y.bias)\n"
            "  %y: ? = Reshape(%y.conv, %y.from_nchw)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(GemmToConv, MustNotFire) {
  // Computed weight; transA; a bias of a full [N, M] matrix.
  const std::string text =
      "graph g (%x: float32[2,6], %w: float32[6,4]) -> (%y, %z, %u) {\n"
      "  init %b: float32[6,4]\n"
      "  init %c: float32[2,4]\n"
      "  init %xt: float32[6,2]\n"
      "  %y = Gemm(%x, %w)\n"
      "  %z = Gemm[transA=1](%xt, %b)\n"
      "  %u = Gemm(%x, %b, %c)\n"
      "}\n";
  const auto run = run_pass(text, "gemm_to_conv");
  EXPECT_EQ(run.rewrites, 0);
  EXPECT_EQ(run.dump, normalized(text));
}

TEST(MatMulToConv, RowsFormAbsorbsTheBiasAdd) {
  const auto run = run_pass(
      "graph g (%x: float32[1,5,6]) -> (%y) {\n"
      "  init %w: float32[6,9]\n"
      "  init %b: float32[9]\n"
      "  %m: float32[1,5,9] = MatMul(%x, %w)\n"
      "  %y: float32[1,5,9] = Add(%m, %b)\n"
      "}\n",
      "matmul_to_conv", {}, true);
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,5,6]) -> (%y) {\n"
            "  init %y.to_nchw: int64[4]{-1,6,1,1}\n"
            "  init %y.weight: float32[9,6,1,1]\n"
            "  init %y.bias: float32[9]\n"
            "  init %y.from_nchw: int64[3]{1,5,9}\n"
            "  %y.nchw: float32[5,6,1,1] = Reshape(%x, %y.to_nchw)\n"
            "  %y.conv: float32[5,9,1,1] = Conv[kernel_shape=[1,1]](%y.nchw, %y.weight, %y.bias)\n"
            "  %y: float32[1,5,9] = Reshape(%y.conv, %y.from_nchw)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(MatMulToConv, ChannelFirstFormAfterATransposeCancelsWithCancellation) {
  // The tail of a CRNN: [1,C,1,T] → Squeeze → Transpose → MatMul. After matmul_to_conv and
  // reshape_transpose_cancellation the Conv reads the 4-D tensor directly.
  const std::string text =
      "graph g (%x: float32[1,6,1,5]) -> (%y) {\n"
      "  init %w: float32[6,9]\n"
      "  init %b: float32[9]\n"
      "  init %axes: int64[1]{2}\n"
      "  %s: float32[1,6,5] = Squeeze(%x, %axes)\n"
      "  %t: float32[1,5,6] = Transpose[perm=[0,2,1]](%s)\n"
      "  %m: float32[1,5,9] = MatMul(%t, %w)\n"
      "  %y: float32[1,5,9] = Add(%b, %m)\n"
      "}\n";
  ir::Model model = ir::parse_model(text);
  const ir::Model reference = ir::parse_model(text);
  run_passes(model, {{"matmul_to_conv", {}},
                     {"reshape_transpose_cancellation", {}},
                     {"dead_code_elimination", {}}});
  EXPECT_EQ(ir::dump(*model.graph),
            "graph g (%x: float32[1,6,1,5]) -> (%y) {\n"
            "  init %y.channels.weight: float32[9,6,1,1]\n"
            "  init %y.channels.bias: float32[9]\n"
            "  init %y.channels.from_nchw: int64[3]{0,0,-1}\n"
            "  %y.channels.conv = Conv[kernel_shape=[1,1]](%x, %y.channels.weight, "
            "%y.channels.bias)\n"
            "  %y.channels = Reshape(%y.channels.conv, %y.channels.from_nchw)\n"
            "  %y = Transpose[perm=[0,2,1]](%y.channels)\n"
            "}\n");
  EXPECT_LT(testing::relative_output_difference(reference, model, 3), kFloatTolerance);
}

TEST(MatMulToConv, MustNotFire) {
  // Two computed operands (attention scores); a 3-D weight; a rank-3 input of unknown leading
  // dims in rows form; rows_form off for a plain input.
  const std::string text =
      "graph g (%q: float32[2,3,4], %k: float32[2,4,3], %x: float32[2,4]) -> (%y, %z, %u) {\n"
      "  init %w3: float32[2,4,3]\n"
      "  init %w: float32[4,3]\n"
      "  %y = MatMul(%q, %k)\n"
      "  %z = MatMul(%q, %w3)\n"
      "  %a: float32[?,?,4] = Relu(%q)\n"
      "  %u = MatMul(%a, %w)\n"
      "}\n";
  const auto run = run_pass(text, "matmul_to_conv");
  EXPECT_EQ(run.rewrites, 0);
  EXPECT_EQ(run.dump, normalized(text));
  const std::string plain =
      "graph g (%x: float32[2,4]) -> (%y) {\n"
      "  init %w: float32[4,3]\n"
      "  %y = MatMul(%x, %w)\n"
      "}\n";
  EXPECT_EQ(run_pass(plain, "matmul_to_conv", {{"rows_form", "false"}}).rewrites, 0);
  EXPECT_EQ(run_pass(plain, "matmul_to_conv").rewrites, 1);
}

}  // namespace
}  // namespace openbpu::passes
