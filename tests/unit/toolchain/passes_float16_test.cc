// float16_to_float32 on text graphs: a half-precision export computes in float32.
#include "pass_test_support.h"

namespace openbpu::passes {
namespace {


TEST(Float16ToFloat32, AHalfPrecisionExportComputesInFloat32) {
  ir::Model model = ir::parse_model(
      "graph g (%x: float32[1,2,4,4]) -> (%y) {\n"
      "  init %w: float16[3,2,1,1]{0.5,-1,0.25,2,1.5,-0.125}\n"
      "  %xh: float16[1,2,4,4] = Cast[to=10](%x)\n"
      "  %c: float16[1,3,4,4] = Conv(%xh, %w)\n"
      "  %k: float16[1] = Constant[value=float16[1]{3}]()\n"
      "  %m: float16[1,3,4,4] = Mul(%c, %k)\n"
      "  %y: float32[1,3,4,4] = Cast[to=1](%m)\n"
      "}\n");
  std::vector<std::string> log;
  const auto reports = run_passes(model, {{"float16_to_float32", {}}}, {[&](const std::string& l) { log.push_back(l); }, {}});
  EXPECT_EQ(ir::dump(*model.graph, {.types = true}),
            "graph g (%x: float32[1,2,4,4]) -> (%y) {\n"
            "  init %w: float32[3,2,1,1]{0.5,-1,0.25,2,1.5,-0.125}\n"
            "  %c: float32[1,3,4,4] = Conv(%x, %w)\n"
            "  %k: float32[1] = Constant[value=float32[1]{3}]()\n"
            "  %y: float32[1,3,4,4] = Mul(%c, %k)\n"
            "}\n");
  EXPECT_GT(reports.front().rewrites, 0);
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.front().find("the model computes in float16"), std::string::npos) << log.front();
  // The result runs, and computes what the float32 graph does.
  const ir::Model reference = ir::parse_model(
      "graph g (%x: float32[1,2,4,4]) -> (%y) {\n"
      "  init %w: float32[3,2,1,1]{0.5,-1,0.25,2,1.5,-0.125}\n"
      "  init %k: float32[1]{3}\n"
      "  %c = Conv(%x, %w)\n"
      "  %y = Mul(%c, %k)\n"
      "}\n");
  EXPECT_EQ(testing::relative_output_difference(reference, model, 7), 0.0);
}

TEST(Float16ToFloat32, MustNotFire) {
  // A float32 model, and Casts between other types (int64 → float32 stays: it converts).
  const std::string text =
      "graph g (%x: float32[2,3], %i: int64[2,3]) -> (%y, %z) {\n"
      "  %f = Cast[to=1](%i)\n"
      "  %y = Add(%x, %f)\n"
      "  %z = Cast[to=7](%x)\n"
      "}\n";
  testing::expect_unchanged(text, "float16_to_float32");
}

}  // namespace
}  // namespace openbpu::passes
