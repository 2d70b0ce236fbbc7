// operator_replacement, activation_canonicalization, reshape_transpose_cancellation on text
// graphs.
#include "openbpu/passes/activation_patterns.h"
#include "pass_test_support.h"

namespace openbpu::passes {
namespace {

using testing::normalized;
using testing::kFloatTolerance;
using testing::run_pass;

TEST(OperatorReplacement, DivSubPowBecomeMulAddMul) {
  const auto run = run_pass(
      "graph g (%x: float32[2,9], %d: float32[2,9]) -> (%y) {\n"
      "  init %c: float32[9] uniform(1, 2)\n"
      "  init %k: float32[9]\n"
      "  init %two: float32[]{2}\n"
      "  %a = Div(%x, %c)\n"
      "  %b: float32[2,9] = Sub(%a, %k)\n"
      "  %p = Pow(%b, %two)\n"
      "  %s: float32[2,9] = Sqrt(%d)\n"
      "  %y = Div(%p, %s)\n"
      "}\n",
      "operator_replacement");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2,9], %d: float32[2,9]) -> (%y) {\n"
            "  init %c.reciprocal: float32[9]\n"
            "  init %k.negated: float32[9]\n"
            "  %a = Mul(%x, %c.reciprocal)\n"
            "  %b = Add(%a, %k.negated)\n"
            "  %p = Mul(%b, %b)\n"
            "  %s = Sqrt(%d)\n"
            "  %s.reciprocal = Reciprocal(%s)\n"
            "  %y = Mul(%p, %s.reciprocal)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(OperatorReplacement, TheRewrittenNodeKeepsItsName) {
  // The yaml's run_on_cpu / node_info name nodes of the original model.
  ir::Model model = ir::parse_model(
      "graph g (%x: float32[2,9]) -> (%y) {\n"
      "  init %two: float32[]{2}\n"
      "  %y = Pow(%x, %two)\n"
      "}\n");
  model.graph->nodes().front()->set_name("stft/Pow");
  run_passes(model, {{"operator_replacement", {}}});
  ASSERT_EQ(model.graph->nodes().size(), 1u);
  EXPECT_EQ(model.graph->nodes().front()->op_type(), "Mul");
  EXPECT_EQ(model.graph->nodes().front()->name(), "stft/Pow");
}

TEST(OperatorReplacement, SpatialReduceMeanBecomesGlobalAveragePool) {
  const auto run = run_pass(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%x: float32[1,9,4,5]) -> (%y, %z) {\n"
      "  %y = ReduceMean[axes=[2,3]](%x)\n"
      "  %z = ReduceMean[axes=[-1,-2], keepdims=0](%x)\n"
      "}\n",
      "operator_replacement");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,9,4,5]) -> (%y, %z) {\n"
            "  init %z.shape: int64[2]{0,-1}\n"
            "  %y = GlobalAveragePool(%x)\n"
            "  %z.pooled = GlobalAveragePool(%x)\n"
            "  %z = Reshape(%z.pooled, %z.shape)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(OperatorReplacement, NeutralConstantsVanishAndConstantFactorsMerge) {
  const auto run = run_pass(
      "graph g (%x: float32[2,9]) -> (%y) {\n"
      "  init %one: float32[1]{1}\n"
      "  init %zero: float32[]{0}\n"
      "  init %c1: float32[9]\n"
      "  init %c2: float32[]{3}\n"
      "  %a = Mul(%one, %x)\n"
      "  %b = Add(%a, %zero)\n"
      "  %m1 = Mul(%b, %c1)\n"
      "  %y = Mul(%c2, %m1)\n"
      "}\n",
      "operator_replacement");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2,9]) -> (%y) {\n"
            "  init %c2.combined: float32[9]\n"
            "  %y = Mul(%x, %c2.combined)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(OperatorReplacement, MustNotFire) {
  // Integer arithmetic; a divisor with a zero; Mul by ones that broadcasts x to a larger shape;
  // a merge across a value used twice; Pow 3; ReduceMean over channels; Div by a computed
  // value with div_to_reciprocal off.
  const std::string text =
      "model opsets=[ai.onnx:13]\n"
      "graph g (%i: int64[4], %x: float32[1,9,2,2], %d: float32[1,9,2,2]) -> "
      "(%a, %b, %c, %e, %f, %h, %q) {\n"
      "  init %ik: int64[]{2}\n"
      "  init %z: float32[9,1,1]{1,0,2,3,4,5,6,7,8}\n"
      "  init %ones: float32[2,1,9,2,2]\n"
      "  init %k: float32[]{2}\n"
      "  init %three: float32[]{3}\n"
      "  %a = Div(%i, %ik)\n"
      "  %b = Div(%x, %z)\n"
      "  %c = Mul(%x, %ones)\n"
      "  %m = Mul(%x, %k)\n"
      "  %e = Mul(%m, %k)\n"
      "  %f = Pow(%m, %three)\n"
      "  %h = ReduceMean[axes=[1]](%x)\n"
      "  %q = Div(%x, %d)\n"
      "}\n";
  const auto run = run_pass(text, "operator_replacement", {{"div_to_reciprocal", "false"}});
  EXPECT_EQ(run.rewrites, 0);
  EXPECT_EQ(run.dump, normalized(text));
}

TEST(ActivationCanonicalization, ClipForms) {
  const auto run = run_pass(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%x: float32[2,9]) -> (%r, %r6, %i) {\n"
      "  init %zero: float32[]{0}\n"
      "  init %six: float32[]{6}\n"
      "  %r = Clip(%x, %zero)\n"
      "  %r6 = Clip(%x, %zero, %six)\n"
      "  %a = Abs(%x)\n"
      "  %i = Clip(%a)\n"
      "}\n",
      "activation_canonicalization");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2,9]) -> (%r, %r6, %i) {\n"
            "  init %zero: float32[]{0}\n"
            "  init %six: float32[]{6}\n"
            "  %r = Relu(%x)\n"
            "  %r6 = Clip(%x, %zero, %six)\n"
            "  %i = Abs(%x)\n"
            "}\n");
  EXPECT_EQ(run.difference, 0);
}

// paddle2onnx's hardswish: x · Clip(x + 3, 0, 6) / 6 (opset 9: Clip bounds as attributes), and
// its hardsigmoid Clip(x + 3, 0, 6) / 6.
constexpr const char* kPaddleHardSwish =
    "model opsets=[ai.onnx:9]\n"
    "graph g (%x: float32[1,9,3,3]) -> (%y, %s) {\n"
    "  init %three: float32[]{3}\n"
    "  init %six: float32[]{6}\n"
    "  %a = Add(%x, %three)\n"
    "  %c = Clip[min=0, max=6](%a)\n"
    "  %m = Mul(%x, %c)\n"
    "  %y = Div(%m, %six)\n"
    "  %b = Add(%three, %x)\n"
    "  %d = Clip[min=0, max=6](%b)\n"
    "  %s = Div(%d, %six)\n"
    "}\n";

TEST(ActivationCanonicalization, PaddleHardSwishBecomesHardSigmoidTimesXBelowOpset14) {
  const auto run = run_pass(kPaddleHardSwish, "activation_canonicalization");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,9,3,3]) -> (%y, %s) {\n"
            "  %y.hardsigmoid = HardSigmoid[alpha=0.1666667, beta=0.5](%x)\n"
            "  %y = Mul(%x, %y.hardsigmoid)\n"
            "  %s = HardSigmoid[alpha=0.1666667, beta=0.5](%x)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(ActivationCanonicalization, TheReplacedNodesNameStandsForItsReplacement) {
  // node_info names nodes of the original model: after the rewrite the Div's name still finds
  // the HardSigmoid and the Mul that replaced x · Clip(x + 3, 0, 6) / 6, and the second Div's
  // name the one HardSigmoid that replaced it.
  ir::Model model = ir::parse_model(kPaddleHardSwish);
  const std::string div = model.graph->find_value("y")->producer()->name();
  const std::string gate = model.graph->find_value("s")->producer()->name();
  run_passes(model, {{"activation_canonicalization", {}}});
  std::vector<std::string> ops;
  for (const ir::Node* n : ir::nodes_standing_for(*model.graph, div)) ops.push_back(n->op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"HardSigmoid", "Mul"}));
  const auto single = ir::nodes_standing_for(*model.graph, gate);
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0]->op_type(), "HardSigmoid");
  EXPECT_EQ(single[0]->name(), gate);
}

TEST(ActivationCanonicalization, HardSwishFromOpset14) {
  const auto run = run_pass(
      "model opsets=[ai.onnx:14]\n"
      "graph g (%x: float32[1,9,3,3]) -> (%y, %z) {\n"
      "  init %three: float32[]{3}\n"
      "  init %zero: float32[]{0}\n"
      "  init %six: float32[]{6}\n"
      "  init %sixth: float32[]{0.1666667}\n"
      "  %a = Add(%x, %three)\n"
      "  %c = Clip(%a, %zero, %six)\n"
      "  %m = Mul(%c, %x)\n"
      "  %y = Mul(%m, %sixth)\n"
      "  %h = HardSigmoid[alpha=0.1666667, beta=0.5](%y)\n"
      "  %z = Mul(%h, %y)\n"
      "}\n",
      "activation_canonicalization");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,9,3,3]) -> (%y, %z) {\n"
            "  %y = HardSwish(%x)\n"
            "  %z = HardSwish(%y)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(ActivationCanonicalization, MustNotFire) {
  // Clip with a computed bound; Clip(x+3, 0, 6) whose sum is used elsewhere; an SE gate
  // (HardSigmoid of another tensor); HardSigmoid with alpha 0.2; a swish; x·Clip(x+2)/6.
  const std::string text =
      "model opsets=[ai.onnx:14]\n"
      "graph g (%x: float32[1,9,3,3], %lo: float32[], %g: float32[1,9,1,1]) -> "
      "(%a, %y, %b, %e, %f, %w, %u) {\n"
      "  init %two: float32[]{2}\n"
      "  init %three: float32[]{3}\n"
      "  init %zero: float32[]{0}\n"
      "  init %six: float32[]{6}\n"
      "  %a = Clip(%x, %lo)\n"
      "  %s = Add(%x, %three)\n"
      "  %c = Clip(%s, %zero, %six)\n"
      "  %m = Mul(%x, %c)\n"
      "  %y = Div(%m, %six)\n"
      "  %b = Neg(%s)\n"
      "  %h = HardSigmoid[alpha=0.1666667, beta=0.5](%g)\n"
      "  %e = Mul(%x, %h)\n"
      "  %h2 = HardSigmoid[alpha=0.2, beta=0.5](%x)\n"
      "  %f = Mul(%x, %h2)\n"
      "  %sg = Sigmoid(%x)\n"
      "  %w = Mul(%x, %sg)\n"
      "  %t = Add(%x, %two)\n"
      "  %ct = Clip(%t, %zero, %six)\n"
      "  %mt = Mul(%x, %ct)\n"
      "  %u = Div(%mt, %six)\n"
      "}\n";
  const auto run = run_pass(text, "activation_canonicalization");
  EXPECT_EQ(run.rewrites, 0);
  EXPECT_EQ(run.dump, normalized(text));
}

TEST(ActivationPatterns, RecogniseSwishHardSwishAndClipBounds) {
  const ir::Model model = ir::parse_model(
      "model opsets=[ai.onnx:9]\n"
      "graph g (%x: float32[4]) -> (%w, %h, %n, %r6, %r) {\n"
      "  %s = Sigmoid(%x)\n"
      "  %w = Mul(%s, %x)\n"
      "  %hs = HardSigmoid[alpha=0.1666667, beta=0.5](%x)\n"
      "  %h = Mul(%x, %hs)\n"
      "  %n = Mul(%s, %hs)\n"
      "  %r6 = Clip[min=0, max=6](%x)\n"
      "  %r = Clip[min=0](%x)\n"
      "}\n");
  const ir::Graph& g = *model.graph;
  auto node = [&](const char* out) { return g.find_value(out)->producer(); };
  EXPECT_EQ(match_swish(*node("w")), g.find_value("x"));
  EXPECT_EQ(match_swish(*node("h")), nullptr);
  EXPECT_EQ(match_hard_swish(*node("h")), g.find_value("x"));
  EXPECT_EQ(match_hard_swish(*node("n")), nullptr);
  EXPECT_EQ(match_swish(*node("n")), nullptr);
  EXPECT_TRUE(clip_bounds(model, *node("r6"))->is_relu6());
  EXPECT_TRUE(clip_bounds(model, *node("r"))->is_relu());
  EXPECT_FALSE(clip_bounds(model, *node("r6"))->is_relu());
}

TEST(ReshapeTransposeCancellation, TransposePairsComposeOrCancel) {
  const auto run = run_pass(
      "graph g (%x: float32[2,3,4,5]) -> (%y, %z) {\n"
      "  %t1 = Transpose[perm=[0,2,3,1]](%x)\n"
      "  %t2 = Transpose[perm=[0,3,1,2]](%t1)\n"
      "  %y = Relu(%t2)\n"
      "  %t3 = Transpose[perm=[1,0,2,3]](%x)\n"
      "  %z = Transpose[perm=[0,1,3,2]](%t3)\n"
      "}\n",
      "reshape_transpose_cancellation");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2,3,4,5]) -> (%y, %z) {\n"
            "  %y = Relu(%x)\n"
            "  %z = Transpose[perm=[1,0,3,2]](%x)\n"
            "}\n");
  EXPECT_EQ(run.difference, 0);
}

TEST(ReshapeTransposeCancellation, ReshapeChainsCollapse) {
  const auto run = run_pass(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%in: float32[2,3,4], %v: float32[2,?]) -> (%y, %z, %u, %w) {\n"
      "  init %s1: int64[2]{6,4}\n"
      "  init %s2: int64[3]{2,-1,2}\n"
      "  init %same: int64[3]{0,3,4}\n"
      "  init %flat: int64[1]{-1}\n"
      "  init %axes: int64[1]{1}\n"
      "  %x: float32[2,3,4] = Relu(%in)\n"
      "  %r1 = Reshape(%x, %s1)\n"
      "  %y = Reshape(%r1, %s2)\n"
      "  %r2 = Reshape(%x, %same)\n"
      "  %z = Neg(%r2)\n"
      "  %a = Reshape(%v, %flat)\n"
      "  %u = Reshape(%a, %s2)\n"
      "  %q = Unsqueeze(%x, %axes)\n"
      "  %s = Squeeze(%q, %axes)\n"
      "  %w = Exp(%s)\n"
      "}\n",
      "reshape_transpose_cancellation");
  EXPECT_EQ(run.dump,
            "graph g (%in: float32[2,3,4], %v: float32[2,?]) -> (%y, %z, %u, %w) {\n"
            "  init %s2: int64[3]{2,-1,2}\n"
            "  init %y.shape: int64[3]{2,6,2}\n"
            "  %x = Relu(%in)\n"
            "  %y = Reshape(%x, %y.shape)\n"
            "  %z = Neg(%x)\n"
            "  %u = Reshape(%v, %s2)\n"
            "  %w = Exp(%x)\n"
            "}\n");
  EXPECT_EQ(run.difference, 0);
}

TEST(ReshapeTransposeCancellation, ATransposeMovingOnlyUnitDimsIsAReshape) {
  const auto run = run_pass(
      "graph g (%x: float32[1,9,1,5]) -> (%y) {\n"
      "  %t = Transpose[perm=[0,2,1,3]](%x)\n"
      "  %y = Relu(%t)\n"
      "}\n",
      "reshape_transpose_cancellation");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,9,1,5]) -> (%y) {\n"
            "  init %t.shape: int64[4]{1,1,9,5}\n"
            "  %t = Reshape(%x, %t.shape)\n"
            "  %y = Relu(%t)\n"
            "}\n");
  EXPECT_EQ(run.difference, 0);
}

TEST(ReshapeTransposeCancellation, MustNotFire) {
  // A real Transpose; a Reshape of unknown input shape; Squeeze/Unsqueeze on different axes;
  // Reshape ∘ Reshape whose second target copies a dim (0) of an unknown intermediate shape.
  // (A no-op between a graph input and a graph output stays too: both names must remain.)
  const std::string text =
      "model opsets=[ai.onnx:13]\n"
      "graph g (%x: float32[2,3,4], %v: float32[?,6], %e: float32[1,3,4]) -> "
      "(%y, %z, %w, %u, %n) {\n"
      "  init %same: int64[3]{0,3,4}\n"
      "  init %s: int64[2]{3,-1}\n"
      "  init %c: int64[2]{0,-1}\n"
      "  init %a1: int64[1]{1}\n"
      "  init %a0: int64[1]{0}\n"
      "  %y = Transpose[perm=[0,2,1]](%x)\n"
      "  %z = Reshape(%v, %s)\n"
      "  %q = Unsqueeze(%e, %a1)\n"
      "  %w = Squeeze(%q, %a0)\n"
      "  %r = Reshape(%v, %s)\n"
      "  %u = Reshape(%r, %c)\n"
      "  %n = Reshape(%x, %same)\n"
      "}\n";
  const auto run = run_pass(text, "reshape_transpose_cancellation");
  EXPECT_EQ(run.rewrites, 0);
  EXPECT_EQ(run.dump, normalized(text));
}

TEST(SoftmaxAxisCanonicalization, OpsetElevenSoftmaxGetsItsOneAxisMeaning) {
  // a: [axis:] = {6, 1, 1} → axis 1 written out; b: default axis 1 of [2, 1, 5] → axis 2;
  // c: [axis:] = {3, 4} → Reshape to [2, 12], Softmax along 1, Reshape back.
  const auto run = run_pass(
      "model opsets=[ai.onnx:11]\n"
      "graph g (%x: float32[2,6,1,1], %w: float32[2,1,5], %v: float32[2,3,4]) -> (%a, %b, %c) {\n"
      "  %a = Softmax(%x)\n"
      "  %b = Softmax(%w)\n"
      "  %c = Softmax[axis=1](%v)\n"
      "}\n",
      "softmax_axis_canonicalization");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2,6,1,1], %w: float32[2,1,5], %v: float32[2,3,4]) -> (%a, %b, %c) {\n"
            "  init %v.shape2d: int64[2]{2,12}\n"
            "  init %c.shape: int64[3]{2,3,4}\n"
            "  %a = Softmax[axis=1](%x)\n"
            "  %b = Softmax[axis=2](%w)\n"
            "  %v.2d = Reshape(%v, %v.shape2d)\n"
            "  %c.2d = Softmax[axis=1](%v.2d)\n"
            "  %c = Reshape(%c.2d, %c.shape)\n"
            "}\n");
  EXPECT_LT(run.difference, kFloatTolerance);
}

TEST(SoftmaxAxisCanonicalization, LeavesOpsetThirteenAndCanonicalNodesAlone) {
  const char* opset13 =
      "model opsets=[ai.onnx:13]\n"
      "graph g (%v: float32[2,3,4]) -> (%c) {\n"
      "  %c = Softmax[axis=1](%v)\n"
      "}\n";
  EXPECT_EQ(run_pass(opset13, "softmax_axis_canonicalization").rewrites, 0);
  const char* canonical =
      "model opsets=[ai.onnx:11]\n"
      "graph g (%v: float32[2,3,4]) -> (%c) {\n"
      "  %c = Softmax[axis=2](%v)\n"
      "}\n";
  EXPECT_EQ(run_pass(canonical, "softmax_axis_canonicalization").rewrites, 0);
}

}  // namespace
}  // namespace openbpu::passes

namespace openbpu::passes {
namespace {

TEST(OperatorReplacement, SumBecomesAChainOfAdds) {
  const auto run = testing::run_pass(
      "graph g (%a: float32[2,3], %b: float32[2,3], %c: float32[1,3]) -> (%y, %z) {\n"
      "  %y = Sum(%a, %b, %c)\n"
      "  %s = Sum(%a)\n"
      "  %z = Neg(%s)\n"
      "}\n",
      "operator_replacement");
  EXPECT_EQ(run.dump,
            "graph g (%a: float32[2,3], %b: float32[2,3], %c: float32[1,3]) -> (%y, %z) {\n"
            "  %y.partial = Add(%a, %b)\n"
            "  %y = Add(%y.partial, %c)\n"
            "  %z = Neg(%a)\n"
            "}\n");
  EXPECT_EQ(run.difference, 0);
}

}  // namespace
}  // namespace openbpu::passes
