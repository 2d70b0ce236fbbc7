#include <gtest/gtest.h>

#include "openbpu/common/error.h"
#include "openbpu/ir/dump.h"
#include "openbpu/ir/parse.h"
#include "openbpu/ir/verifier.h"

namespace openbpu::ir {
namespace {

TEST(GraphText, DumpOfAParsedGraphIsTheText) {
  const std::string text =
      "graph net (%x: float32[1,3,8,8], %n: int64[batch,?]) -> (%y, %s) {\n"
      "  init %b: float32[4]{0.5,1,2,-1}\n"
      "  init %lo: float32[]{0}\n"
      "  init %w: float32[4,3,3,3]\n"
      "  %c = Conv[kernel_shape=[3,3], pads=[1,1,1,1]](%x, %w, %b)\n"
      "  %r = Clip(%c, %lo, _)\n"
      "  %y = horizon::HzLut[function=\"relu\", input_scale=0.5](%r)\n"
      "  %s, _ = Split[axis=1](%n)\n"
      "}\n";
  const Model model = parse_model(text);
  EXPECT_EQ(dump(*model.graph), text);
  EXPECT_TRUE(verify(*model.graph).empty()) << verify(*model.graph).front();
  EXPECT_EQ(model.opset_version(""), 17);
}

TEST(GraphText, ModelLineTypesAndAttributeKindsFromTheKernelLibrary) {
  const Model model = parse_model(
      "model ir_version=7 opsets=[ai.onnx:9,horizon:1]\n"
      "graph g (%x: float32[2,3]) -> (%y) {\n"
      "  %a: float32[2,3] = Clip[min=0, max=6](%x)\n"
      "  %y: float32[2,3] = Mul(%a, %a)\n"
      "}\n");
  EXPECT_EQ(model.ir_version, 7);
  EXPECT_EQ(model.opset_version(""), 9);
  EXPECT_EQ(model.opset_version("horizon"), 1);
  const Node* clip = model.graph->nodes().front();
  EXPECT_EQ(clip->attrs().get_float("min"), 0.0f);  // a float: Clip declares min as float
  EXPECT_EQ(clip->name(), "a");
  EXPECT_EQ(model.graph->find_value("a")->type().to_string(), "float32[2,3]");
  EXPECT_EQ(dump(model),
            "model ir_version=7 opsets=[ai.onnx:9,horizon:1]\n"
            "graph g (%x: float32[2,3]) -> (%y) {\n"
            "  %a = Clip[min=0, max=6](%x)\n"
            "  %y = Mul(%a, %a)\n"
            "}\n");
}

TEST(GraphText, PseudoRandomConstantsDependOnlyOnTheName) {
  const std::string text =
      "graph g (%x: float32[4]) -> (%y) {\n"
      "  init %a: float32[16]\n"
      "  init %v: float32[16] uniform(0.5, 2)\n"
      "  %y = Add(%x, %a)\n"
      "}\n";
  const Model m1 = parse_model(text), m2 = parse_model(text);
  const Tensor& a1 = *m1.graph->find_value("a")->constant();
  const Tensor& a2 = *m2.graph->find_value("a")->constant();
  const Tensor& v = *m1.graph->find_value("v")->constant();
  bool differs_from_v = false;
  for (int64_t i = 0; i < 16; ++i) {
    EXPECT_EQ(a1.float_at(i), a2.float_at(i));
    EXPECT_GE(a1.float_at(i), -1.0);
    EXPECT_LT(a1.float_at(i), 1.0);
    EXPECT_GE(v.float_at(i), 0.5);
    EXPECT_LT(v.float_at(i), 2.0);
    differs_from_v = differs_from_v || a1.float_at(i) != v.float_at(i);
  }
  EXPECT_TRUE(differs_from_v);
}

TEST(GraphText, NamesWithColonsAndUnsortedNodes) {
  const Model model = parse_model(
      "graph g (%x: float32[2]) -> (%onnx::y_1) {\n"
      "  %onnx::y_1 = Neg(%a/b:0)\n"
      "  %a/b:0: float32[2] = Abs(%x)\n"
      "}\n");
  const Graph& g = *model.graph;
  ASSERT_NE(g.find_value("a/b:0"), nullptr);
  EXPECT_EQ(g.find_value("a/b:0")->type().to_string(), "float32[2]");
  EXPECT_EQ(g.outputs().front()->name(), "onnx::y_1");
  // Written order is kept; the verifier reports it, topological_sort fixes it.
  EXPECT_FALSE(verify(g).empty());
}

TEST(GraphText, MistakesNameTheLine) {
  auto message = [](const std::string& text) {
    try {
      parse_model(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("graph g (%x: float32[2]) -> (%y) {\n  %y = Abs(%x\n}\n").find("line 2"),
            std::string::npos);
  EXPECT_NE(message("graph g (%x: float32[2]) -> (%y) {\n  init %w: float32[2]{1}\n}\n")
                .find("has 1 values but its shape holds 2"),
            std::string::npos);
  EXPECT_NE(message("graph g (%x: floaty[2]) -> (%y) {\n}\n").find("unknown element type 'floaty'"),
            std::string::npos);
  EXPECT_NE(message("graph g (%x: float32[2]) -> (%y) {\n  %y = Abs(%x)\n  %y = Neg(%x)\n}\n")
                .find("'%y' is defined twice"),
            std::string::npos);
  EXPECT_NE(message("graph g (%x: float32[2]) -> (%z) {\n  %y = Abs(%x)\n}\n")
                .find("graph output '%z' is never defined"),
            std::string::npos);
  EXPECT_NE(message("graph g (%x: float32[2]) -> (%y) {\n  %y = Abs(%x)\n").find("missing '}'"),
            std::string::npos);
}

}  // namespace
}  // namespace openbpu::ir
