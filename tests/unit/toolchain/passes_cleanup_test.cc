// dropout_identity_removal, constant_folding, dead_code_elimination on text graphs.
#include "pass_test_support.h"

namespace openbpu::passes {
namespace {

using testing::normalized;
using testing::run_pass;

TEST(DropoutIdentityRemoval, ConsumersReadTheInputDirectly) {
  const auto run = run_pass(
      "model opsets=[ai.onnx:11]\n"
      "graph g (%x: float32[2,3]) -> (%y) {\n"
      "  %a = Abs(%x)\n"
      "  %i = Identity(%a)\n"
      "  %d, %mask = Dropout[ratio=0.5](%i)\n"
      "  %y = Neg(%d)\n"
      "}\n",
      "dropout_identity_removal");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2,3]) -> (%y) {\n"
            "  %a = Abs(%x)\n"
            "  %y = Neg(%a)\n"
            "}\n");
  EXPECT_EQ(run.rewrites, 2);
  EXPECT_EQ(run.difference, 0);
}

TEST(DropoutIdentityRemoval, ACastToItsInputsTypeGoes) {
  const auto run = run_pass(
      "graph g (%x: float32[2,3]) -> (%y) {\n"
      "  %c = Cast[to=1](%x)\n"
      "  %y = Neg(%c)\n"
      "}\n",
      "dropout_identity_removal");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2,3]) -> (%y) {\n"
            "  %y = Neg(%x)\n"
            "}\n");
}

TEST(DropoutIdentityRemoval, AGraphOutputKeepsItsName) {
  const auto run = run_pass(
      "graph g (%x: float32[2,3]) -> (%y) {\n"
      "  %a = Abs(%x)\n"
      "  %b = Neg(%a)\n"
      "  %y = Identity(%a)\n"
      "}\n",
      "dropout_identity_removal");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2,3]) -> (%y) {\n"
            "  %y = Abs(%x)\n"
            "  %b = Neg(%y)\n"
            "}\n");
  EXPECT_EQ(run.difference, 0);
}

TEST(DropoutIdentityRemoval, MustNotFire) {
  // Identity of a graph input or of another graph output producing a graph output; Dropout
  // in training mode or with a used mask; a Cast that changes the type.
  const std::string text =
      "graph g (%x: float32[2,3], %t: bool[]) -> (%y, %z, %a, %m, %k) {\n"
      "  %y = Identity(%x)\n"
      "  %a = Abs(%x)\n"
      "  %k = Cast[to=6](%a)\n"
      "  %z = Identity(%a)\n"
      "  init %r: float32[]{0.5}\n"
      "  %d, _ = Dropout(%a, %r, %t)\n"
      "  %e, %m = Dropout(%d)\n"
      "}\n";
  ir::Model model = ir::parse_model(text);
  const auto reports = run_passes(model, {{"dropout_identity_removal", {}}});
  EXPECT_EQ(reports.front().rewrites, 0);
  EXPECT_EQ(ir::dump(*model.graph), normalized(text));
}

TEST(ConstantFolding, ShapeArithmeticCollapsesIntoAConstantReshapeTarget) {
  const auto run = run_pass(
      "graph g (%x: float32[2,3,4,5]) -> (%y) {\n"
      "  init %zero: int64[1]{0}\n"
      "  init %two: int64[1]{2}\n"
      "  init %minus1: int64[1]{-1}\n"
      "  %s = Shape(%x)\n"
      "  %s32 = Cast[to=6](%s)\n"
      "  %head32 = Slice(%s32, %zero, %two)\n"
      "  %head = Cast[to=7](%head32)\n"
      "  %target = Concat[axis=0](%head, %minus1)\n"
      "  %y = Reshape(%x, %target)\n"
      "}\n",
      "constant_folding");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2,3,4,5]) -> (%y) {\n"
            "  init %target: int64[3]{2,3,-1}\n"
            "  %y = Reshape(%x, %target)\n"
            "}\n");
  EXPECT_EQ(run.rewrites, 5);
  EXPECT_EQ(run.difference, 0);
}

TEST(ConstantFolding, WeightsComputedFromConstantsFoldWithTheKernelLibrary) {
  const auto run = run_pass(
      "graph g (%x: float32[1,4]) -> (%y) {\n"
      "  init %w: float32[3,4]\n"
      "  init %s: float32[]{2}\n"
      "  %wt = Transpose(%w)\n"
      "  %ws = Mul(%wt, %s)\n"
      "  %y = MatMul(%x, %ws)\n"
      "}\n",
      "constant_folding");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,4]) -> (%y) {\n"
            "  init %ws: float32[4,3]\n"
            "  %y = MatMul(%x, %ws)\n"
            "}\n");
  EXPECT_LT(run.difference, 1e-6);
}

TEST(ConstantFolding, MustNotFire) {
  // A blow-up (ConstantOfShape of 1M elements), a random op, QDQ, a graph output, a node with a
  // computed input, Shape of a dynamic shape.
  const std::string text =
      "graph g (%x: float32[2,?]) -> (%y, %big, %c2) {\n"
      "  init %shape: int64[2]{1024,1024}\n"
      "  init %q: int8[4]{1,2,3,4}\n"
      "  init %scale: float32[]{0.5}\n"
      "  init %c: float32[2]{1,2}\n"
      "  %big = ConstantOfShape(%shape)\n"
      "  %r = RandomUniformLike(%c)\n"
      "  %dq = DequantizeLinear(%q, %scale)\n"
      "  %c2 = Neg(%c)\n"
      "  %s = Shape(%x)\n"
      "  %y = Add(%x, %r)\n"
      "  %z = Reshape(%dq, %s)\n"
      "}\n";
  ir::Model model = ir::parse_model(text);
  const auto reports = run_passes(model, {{"constant_folding", {}}});
  EXPECT_EQ(reports.front().rewrites, 0);
  EXPECT_EQ(ir::dump(*model.graph), normalized(text));
}

TEST(ConstantFolding, OptionsMoveTheBlowUpLimitAndQdq) {
  const std::string text =
      "graph g (%x: float32[4]) -> (%y) {\n"
      "  init %n: int64[1]{4}\n"
      "  init %q: int8[4]{1,2,3,4}\n"
      "  init %scale: float32[]{0.5}\n"
      "  %ones = ConstantOfShape[value=float32[1]{1}](%n)\n"
      "  %dq = DequantizeLinear(%q, %scale)\n"
      "  %a = Add(%x, %ones)\n"
      "  %y = Add(%a, %dq)\n"
      "}\n";
  const auto folded = run_pass(text, "constant_folding", {{"keep_qdq", "false"}});
  EXPECT_EQ(folded.dump,
            "graph g (%x: float32[4]) -> (%y) {\n"
            "  init %ones: float32[4]{1,1,1,1}\n"
            "  init %dq: float32[4]{0.5,1,1.5,2}\n"
            "  %a = Add(%x, %ones)\n"
            "  %y = Add(%a, %dq)\n"
            "}\n");
  const auto kept =
      run_pass(text, "constant_folding", {{"always_fold_bytes", "0"}, {"max_growth", "1"}});
  EXPECT_EQ(kept.rewrites, 0);  // 16 bytes of ones from 8 bytes; QDQ kept by default
}

TEST(ConstantFolding, AConstantNodeAlwaysBecomesAnInitializer) {
  // Its value is in the model already (exporters put weights in Constant nodes, spox inside If
  // branches): no growth limit applies.
  const auto run = run_pass(
      "graph g (%x: float32[4]) -> (%y) {\n"
      "  %w = Constant[value=float32[4]{1,2,3,4}]()\n"
      "  %y = Mul(%x, %w)\n"
      "}\n",
      "constant_folding", {{"always_fold_bytes", "0"}, {"max_growth", "1"}});
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[4]) -> (%y) {\n"
            "  init %w: float32[4]{1,2,3,4}\n"
            "  %y = Mul(%x, %w)\n"
            "}\n");
}

TEST(DeadCodeElimination, RemovesUnusedChainsAndInitializersButNotInputs) {
  const auto run = run_pass(
      "graph g (%x: float32[2], %unused: float32[2]) -> (%y) {\n"
      "  init %w: float32[2]{1,2}\n"
      "  init %v: float32[2]{3,4}\n"
      "  %a = Add(%x, %w)\n"
      "  %b = Neg(%a)\n"
      "  %c = Exp(%b)\n"
      "  %y = Abs(%x)\n"
      "}\n",
      "dead_code_elimination");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2], %unused: float32[2]) -> (%y) {\n"
            "  %y = Abs(%x)\n"
            "}\n");
  EXPECT_EQ(run.difference, 0);
}

TEST(DeadCodeElimination, MustNotFireOnALiveGraph) {
  const std::string text =
      "graph g (%x: float32[2]) -> (%y, %b) {\n"
      "  init %w: float32[2]{1,2}\n"
      "  %a = Add(%x, %w)\n"
      "  %b = Neg(%a)\n"
      "  %y = Abs(%a)\n"
      "}\n";
  const auto run = run_pass(text, "dead_code_elimination");
  EXPECT_EQ(run.rewrites, 0);
  EXPECT_EQ(run.dump, normalized(text));
}

}  // namespace
}  // namespace openbpu::passes
