// hb_model_modifier's edge rules and hb_pack's checks (model_tools) on a small model
// description: x -> Quantize -> [BPU] -> t1 -> Dequantize -> y0, and
// [BPU] -> t2 -> Dequantize -> t3 -> Softmax -> y1.
#include <gtest/gtest.h>

#include "openbpu/common/error.h"
#include "openbpu/model_tools/edge_nodes.h"
#include "openbpu/model_tools/package_files.h"

namespace openbpu::model_tools {
namespace {

using format::TensorRefInfo;
using R = format::TensorRefInfo;

format::TensorInfo tensor(const std::string& name, std::vector<int64_t> shape,
                          format::TensorType type) {
  format::TensorInfo t;
  t.name = name;
  t.valid_shape = t.aligned_shape = std::move(shape);
  t.tensor_type = type;
  return t;
}

format::CpuOpInfo op(const std::string& name, const std::string& type, TensorRefInfo in,
                     TensorRefInfo out) {
  format::CpuOpInfo o;
  o.name = name;
  o.op_type = type;
  o.inputs = {in};
  o.outputs = {out};
  return o;
}

format::ModelInfo sample() {
  using T = format::TensorType;
  format::ModelInfo m;
  m.name = "m";
  m.march = "bayes-e";
  m.inputs = {tensor("x", {1, 3, 4, 4}, T::TENSOR_TYPE_F32)};
  m.outputs = {tensor("y0", {1, 8, 4, 4}, T::TENSOR_TYPE_F32),
               tensor("y1", {1, 2}, T::TENSOR_TYPE_F32)};
  // t0: the BPU's NHWC input, channels padded to 32, as the compiler describes it.
  format::TensorInfo t0 = tensor("x_q", {1, 4, 4, 3}, T::TENSOR_TYPE_S8);
  t0.aligned_shape = {1, 4, 4, 32};
  t0.layout = format::TensorLayout::NHWC;
  t0.stride = {512, 128, 32, 1};
  t0.aligned_byte_size = 512;
  t0.quanti_type = format::QuantiType::SCALE;
  t0.scale = {0.5f};
  m.tensors = {t0, tensor("t1", {1, 8, 4, 4}, T::TENSOR_TYPE_S8),
               tensor("t2", {1, 2}, T::TENSOR_TYPE_S8), tensor("t3", {1, 2}, T::TENSOR_TYPE_F32)};
  format::CpuOpInfo quantize =
      op("x_HzQuantize", "Quantize", R::model_input(0), R::intermediate(0));
  quantize.attributes.push_back({});
  quantize.attributes[0].name = "scale";
  quantize.attributes[0].type = format::AttributeType::FLOAT;
  quantize.attributes[0].f = 0.5f;
  m.segments.push_back({"cpu_0", format::CpuSegmentInfo{{quantize}}});
  format::BpuSegmentInfo bpu;
  bpu.inputs = {R::intermediate(0)};
  bpu.outputs = {R::intermediate(1), R::intermediate(2)};
  m.segments.push_back({"bpu_0", bpu});
  m.segments.push_back(
      {"cpu_1",
       format::CpuSegmentInfo{{op("deq_1", "Dequantize", R::intermediate(1), R::model_output(0)),
                               op("deq_2", "Dequantize", R::intermediate(2), R::intermediate(3)),
                               op("softmax", "Softmax", R::intermediate(3), R::model_output(1))}}});
  m.debug_map = {{1, 4, "Conv_0"}};
  return m;
}

std::vector<std::string> names(const std::vector<EdgeNode>& nodes) {
  std::vector<std::string> out;
  for (const EdgeNode& n : nodes) out.push_back(n.name + (n.at_input ? "@in" : "@out"));
  return out;
}

std::string refusal(format::ModelInfo m, const std::string& name) {
  try {
    remove_edge_node(m, name);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ModelTools, ListsOnlyNodesAtTheEdges) {
  EXPECT_EQ(names(removable_nodes(sample())),
            (std::vector<std::string>{"x_HzQuantize@in", "deq_1@out", "softmax@out"}));
}

TEST(ModelTools, InputQuantizeGivesTheLogicalInt8Input) {
  format::ModelInfo m = sample();
  const format::DeletedNodeInfo d = remove_edge_node(m, "x_HzQuantize");
  EXPECT_EQ(d.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(d.outputs, std::vector<std::string>{"x_q"});
  ASSERT_EQ(d.attributes.size(), 1u);
  EXPECT_EQ(d.attributes[0].f, 0.5f);
  const format::TensorInfo& x = m.inputs[0];
  EXPECT_EQ(x.name, "x_q");
  EXPECT_EQ(x.tensor_type, format::TensorType::TENSOR_TYPE_S8);
  EXPECT_EQ(x.valid_shape, (std::vector<int64_t>{1, 3, 4, 4}));  // NCHW again, dense
  EXPECT_EQ(x.aligned_shape, x.valid_shape);
  EXPECT_EQ(x.layout, format::TensorLayout::NCHW);
  EXPECT_EQ(x.stride, (std::vector<int64_t>{48, 16, 4, 1}));
  EXPECT_EQ(x.aligned_byte_size, 48u);
  EXPECT_EQ(x.scale, std::vector<float>{0.5f});
  // The emptied CPU segment and the tensor are gone; references and the debug map renumbered.
  ASSERT_EQ(m.segments.size(), 2u);
  const auto& bpu = std::get<format::BpuSegmentInfo>(m.segments[0].body);
  EXPECT_EQ(bpu.inputs, std::vector<TensorRefInfo>{R::model_input(0)});
  EXPECT_EQ(bpu.outputs, (std::vector<TensorRefInfo>{R::intermediate(0), R::intermediate(1)}));
  EXPECT_EQ(m.tensors.size(), 3u);
  EXPECT_EQ(m.debug_map[0].segment_index, 0u);
  EXPECT_EQ(m.deleted_nodes.size(), 1u);
}

TEST(ModelTools, RemovalIsSequential) {
  format::ModelInfo m = sample();
  EXPECT_NE(refusal(m, "deq_2"), "");  // inside until the Softmax goes
  remove_edge_node(m, "softmax");
  EXPECT_EQ(names(removable_nodes(m)),
            (std::vector<std::string>{"x_HzQuantize@in", "deq_1@out", "deq_2@out"}));
  remove_edge_node(m, "deq_2");
  EXPECT_EQ(m.outputs[1].name, "t2");
  EXPECT_EQ(std::get<format::BpuSegmentInfo>(m.segments[1].body).outputs[1], R::model_output(1));
  EXPECT_EQ(m.deleted_nodes.size(), 2u);
}

TEST(ModelTools, Refusals) {
  EXPECT_EQ(refusal(sample(), "deq_2"),
            "node 'deq_2' (Dequantize) cannot be removed: it neither reads a model input nor "
            "writes a model output "
            "(only nodes at the model's edges may be removed)");
  EXPECT_EQ(refusal(sample(), "bpu_0"),
            "model 'm' has no CPU node named 'bpu_0' (BPU nodes cannot be removed)");
  format::ModelInfo m = sample();
  std::get<format::CpuSegmentInfo>(m.segments[2].body).ops[0].op_type = "Relu";
  EXPECT_NE(refusal(m, "deq_1").find("at a model output only Transpose, Dequantize"),
            std::string::npos);
  // Must not fire on shared tensors: a model input read twice, an output's input read twice.
  m = sample();
  std::get<format::BpuSegmentInfo>(m.segments[1].body).inputs.push_back(R::model_input(0));
  EXPECT_NE(refusal(m, "x_HzQuantize").find("its model input is read by other nodes too"),
            std::string::npos);
  m = sample();
  std::get<format::CpuSegmentInfo>(m.segments[2].body).ops[1].inputs[0] = R::intermediate(1);
  EXPECT_NE(refusal(m, "deq_1").find("its input tensor is read by other nodes too"),
            std::string::npos);
  EXPECT_EQ(names(removable_nodes(m)),
            (std::vector<std::string>{"x_HzQuantize@in", "softmax@out"}));
}

TEST(ModelTools, PackChecksItsInputs) {
  format::PackageInfo a{"openbpu", "0.1.0", {sample()}}, b = a;
  b.models[0].name = "n";
  const format::PackageInfo packed = pack_packages({{"a.bin", a}, {"b.bin", b}});
  ASSERT_EQ(packed.models.size(), 2u);
  EXPECT_EQ(packed.models[1].name, "n");
  EXPECT_TRUE(is_packed(packed));
  auto message = [](const std::vector<ModelFileInput>& in) {
    try {
      pack_packages(in);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message({{"c.bin", packed}, {"a.bin", a}}),
            "model: c.bin is a packed model, it can not be packed again!");
  EXPECT_NE(
      message({{"a.bin", a}, {"a2.bin", a}}).find("model name 'm' is in both a.bin and a2.bin"),
      std::string::npos);
  EXPECT_EQ(message({{"a.bin", a}}), "hb_pack needs at least two model files, got 1");
  b.models[0].march = "bernoulli2";
  EXPECT_NE(message({{"a.bin", a}, {"b.bin", b}}).find("a packed file runs on one chip"),
            std::string::npos);
}

}  // namespace
}  // namespace openbpu::model_tools
