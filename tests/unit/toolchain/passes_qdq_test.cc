// qdq_removal on text graphs: activation pairs go, dequantized constants fold.
#include "pass_test_support.h"

namespace openbpu::passes {
namespace {

using testing::normalized;
using testing::run_pass;

TEST(QdqRemoval, ActivationPairsGoAndDequantizedWeightsFold) {
  const auto run = run_pass(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%x: float32[1,2]) -> (%y) {\n"
      "  init %s: float32[]{0.5}\n"
      "  init %z: int8[]{0}\n"
      "  init %w: int8[2,2]{2,-4,6,8}\n"
      "  init %ws: float32[]{0.25}\n"
      "  %xq = QuantizeLinear(%x, %s, %z)\n"
      "  %xd = DequantizeLinear(%xq, %s, %z)\n"
      "  %wd = DequantizeLinear(%w, %ws, %z)\n"
      "  %y = MatMul(%xd, %wd)\n"
      "}\n",
      "qdq_removal");
  EXPECT_EQ(run.dump, normalized("graph g (%x: float32[1,2]) -> (%y) {\n"
                                 "  init %wd: float32[2,2]{0.5,-1,1.5,2}\n"
                                 "  %y = MatMul(%x, %wd)\n"
                                 "}\n"));
  EXPECT_EQ(run.rewrites, 2);
}

TEST(QdqRemoval, AGraphOutputPassesItsNameAndPerAxisWeightsFold) {
  // A pair on a constant float weight with per-channel scales (axis 0) folds to the values the
  // QDQ model computes with; the pair ending in the graph output leaves the name to its input.
  const auto run = run_pass(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%x: float32[2,2]) -> (%y) {\n"
      "  init %wf: float32[2,2]{0.3,-0.7,1.1,-0.2}\n"
      "  init %ws: float32[2]{0.25,0.5}\n"
      "  init %wz: int8[2]{0,0}\n"
      "  init %s: float32[]{0.125}\n"
      "  init %z: int8[]{0}\n"
      "  %wq = QuantizeLinear[axis=0](%wf, %ws, %wz)\n"
      "  %wd = DequantizeLinear[axis=0](%wq, %ws, %wz)\n"
      "  %a = Mul(%x, %wd)\n"
      "  %aq = QuantizeLinear(%a, %s, %z)\n"
      "  %y = DequantizeLinear(%aq, %s, %z)\n"
      "}\n",
      "qdq_removal");
  EXPECT_EQ(run.dump, normalized("graph g (%x: float32[2,2]) -> (%y) {\n"
                                 "  init %wd: float32[2,2]{0.25,-0.75,1,0}\n"
                                 "  %y = Mul(%x, %wd)\n"
                                 "}\n"));
  EXPECT_EQ(run.rewrites, 2);
}

TEST(QdqRemoval, MustNotFire) {
  // A QuantizeLinear without a DequantizeLinear (an integer output), and a DequantizeLinear of
  // a graph input.
  const std::string text =
      "model opsets=[ai.onnx:13]\n"
      "graph g (%x: float32[2], %i: int8[2]) -> (%q, %d) {\n"
      "  init %s: float32[]{0.5}\n"
      "  init %z: int8[]{0}\n"
      "  %q = QuantizeLinear(%x, %s, %z)\n"
      "  %d = DequantizeLinear(%i, %s, %z)\n"
      "}\n";
  ir::Model model = ir::parse_model(text);
  const auto reports = run_passes(model, {{"qdq_removal", {}}});
  EXPECT_EQ(reports.front().rewrites, 0);
  EXPECT_EQ(ir::dump(*model.graph), normalized(text));
}

}  // namespace
}  // namespace openbpu::passes
