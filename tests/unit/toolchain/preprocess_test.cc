#include <gtest/gtest.h>

#include "openbpu/ir/dump.h"
#include "openbpu/ir/verifier.h"
#include "openbpu/pipeline/preprocess.h"

namespace openbpu::pipeline {
namespace {

using ir::TensorType;
using kernels::DataType;

ir::Model relu_model() {
  ir::Model m;
  m.opsets.push_back({"", 11});
  ir::Graph& g = *m.graph;
  g.set_name("m");
  TensorType dynamic;
  dynamic.dtype = DataType::kFloat32;
  dynamic.shape = std::vector<ir::Dim>{ir::Dim::known(1), ir::Dim::known(3), ir::Dim::symbolic("h"), ir::Dim::symbolic("w")};
  ir::Value* x = g.add_value("x", dynamic);
  g.add_input(x);
  g.add_output(g.add_node({"Relu", {x}, {"y"}, "relu", "", {}})->output(0));
  return m;
}

config::CompileConfig image_config(config::InputType rt, config::NormType norm) {
  config::CompileConfig c;
  config::InputSpec s;
  s.name = "x";
  s.type_train = config::InputType::kBgr;
  s.type_rt = rt;
  s.shape = {1, 3, 8, 8};
  s.norm_type = norm;
  s.mean = {123.675, 116.28, 103.53};
  s.scale = {0.0171, 0.0175, 0.0174};
  c.input.inputs.push_back(s);
  return c;
}

TEST(Preprocess, ImageInputBecomesTheIntermediateTypeAndFeedsHzPreprocess) {
  ir::Model m = relu_model();
  const auto lines = insert_preprocess(m, image_config(config::InputType::kNv12, config::NormType::kDataMeanAndScale));
  EXPECT_EQ(ir::dump(*m.graph),
            "graph m (%x: int8[1,3,8,8]) -> (%y) {\n"
            "  %x_preprocessed = horizon::HzPreprocess[input_type_rt=\"nv12\", input_type_train=\"bgr\", "
            "input_layout=\"NCHW\", mean=[123.675,116.28,103.53], scale=[0.0171,0.0175,0.0174], "
            "color_range=\"full\"](%x)\n"
            "  %y = Relu(%x_preprocessed)\n"
            "}\n");
  EXPECT_EQ(m.graph->find_value("x_preprocessed")->type().to_string(), "float32[1,3,8,8]");
  EXPECT_EQ(m.opset_version("horizon"), 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "input 'x': yuv444_128 int8[1,3,8,8] -> HzPreprocess -> bgr float32[1,3,8,8]");
  EXPECT_TRUE(ir::verify(*m.graph).empty());
}

TEST(Preprocess, NormTypeSelectsMeanAndScale) {
  ir::Model m = relu_model();
  insert_preprocess(m, image_config(config::InputType::kBgr, config::NormType::kDataScale));
  const ir::Node* pre = m.graph->nodes().front();
  EXPECT_TRUE(pre->attrs().get_floats("mean").empty());
  EXPECT_EQ(pre->attrs().get_floats("scale").size(), 3u);
}

TEST(Preprocess, FeaturemapWithoutNormalisationOnlyFixesTheShape) {
  ir::Model m = relu_model();
  config::CompileConfig c = image_config(config::InputType::kFeaturemap, config::NormType::kNoPreprocess);
  c.input.inputs[0].type_train = config::InputType::kFeaturemap;
  insert_preprocess(m, c);
  EXPECT_EQ(m.graph->nodes().size(), 1u);
  EXPECT_EQ(m.graph->inputs()[0]->type().to_string(), "float32[1,3,8,8]");
}

}  // namespace
}  // namespace openbpu::pipeline
