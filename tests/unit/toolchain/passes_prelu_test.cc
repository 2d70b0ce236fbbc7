// prelu_decomposition on text graphs.
#include "pass_test_support.h"

namespace openbpu::passes {
namespace {

using testing::run_pass;

TEST(PreluDecomposition, APerChannelSlopeBecomesReluMulAdd) {
  const auto run = run_pass(
      "graph g (%x: float32[1,2,3,3]) -> (%y) {\n"
      "  init %s: float32[2,1,1]{0.25,-0.5}\n"
      "  %y = PRelu(%x, %s)\n"
      "}\n",
      "prelu_decomposition");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,2,3,3]) -> (%y) {\n"
            "  init %y.keep: float32[2,1,1]{0.75,1.5}\n"
            "  init %y.slope: float32[2,1,1]{0.25,-0.5}\n"
            "  %y.relu = Relu(%x)\n"
            "  %y.positive = Mul(%y.relu, %y.keep)\n"
            "  %y.scaled = Mul(%x, %y.slope)\n"
            "  %y = Add(%y.positive, %y.scaled)\n"
            "}\n");
  EXPECT_LT(run.difference, 1e-6);
}

TEST(PreluDecomposition, OneSlopeIsALeakyRelu) {
  const auto run = run_pass(
      "graph g (%x: float32[1,2,3,3]) -> (%y) {\n"
      "  init %s: float32[1]{0.125}\n"
      "  %y = PRelu(%x, %s)\n"
      "}\n",
      "prelu_decomposition");
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[1,2,3,3]) -> (%y) {\n"
            "  %y = LeakyRelu[alpha=0.125](%x)\n"
            "}\n");
  EXPECT_EQ(run.difference, 0);
}

TEST(PreluDecomposition, MustNotFire) {
  const std::string text =
      "graph g (%x: float32[1,2,3,3], %s: float32[2,1,1]) -> (%y) {\n"
      "  %y = PRelu(%x, %s)\n"
      "}\n";
  testing::expect_unchanged(text, "prelu_decomposition");
}

}  // namespace
}  // namespace openbpu::passes
