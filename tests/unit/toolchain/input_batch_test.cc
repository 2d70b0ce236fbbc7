// input_batch / separate_batch on text graphs (pipeline/input_batch.h).
#include "openbpu/pipeline/input_batch.h"

#include <gtest/gtest.h>

#include "openbpu/common/error.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/shape_inference.h"
#include "openbpu/ir/parse.h"
#include "openbpu/ir/verifier.h"

namespace openbpu::pipeline {
namespace {

using kernels::DataType;
using kernels::Tensor;

// `count` items for input `name` of the given batch-1 shape, each with different values.
std::vector<std::map<std::string, Tensor>> items(const std::string& name, kernels::Shape shape,
                                                 int count) {
  std::vector<std::map<std::string, Tensor>> out;
  for (int i = 0; i < count; ++i) {
    Tensor t(DataType::kFloat32, shape);
    for (int64_t k = 0; k < t.element_count(); ++k) {
      t.data<float>()[k] =
          static_cast<float>((k * 7 + i * 13) % 11) - 5.0f + 0.25f * static_cast<float>(i);
    }
    out.push_back({{name, std::move(t)}});
  }
  return out;
}

// The text model with its value types inferred (as the conversion's models have them).
ir::Model typed(const std::string& text) {
  ir::Model m = ir::parse_model(text);
  frontend::infer_shapes(m, true);
  return m;
}

// Item `i` of a batched output.
std::vector<float> item_of(const Tensor& t, int64_t i) {
  const int64_t per = t.element_count() / t.shape()[0];
  return std::vector<float>(t.data<float>() + i * per, t.data<float>() + (i + 1) * per);
}

std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.element_count());
}

// A flattening Reshape [1, 12] and a MatMul-turned-Conv pattern that merges the batch with the
// sequence ([1,4,3] → [4,3,1,1]) and splits it out again ([4,3,1,1] → [1,4,3]).
const char* kModel =
    "model opsets=[ai.onnx:13]\n"
    "graph g (%x: float32[1,4,3]) -> (%y, %f) {\n"
    "  init %nchw: int64[4]{4,3,1,1}\n"
    "  init %back: int64[3]{1,4,3}\n"
    "  init %flat: int64[2]{1,12}\n"
    "  %c = Reshape(%x, %nchw)\n"
    "  %r = Relu(%c)\n"
    "  %y = Reshape(%r, %back)\n"
    "  %f = Reshape(%x, %flat)\n"
    "}\n";

TEST(InputBatch, ReshapeTargetsFollowTheBatchAndEveryItemMatchesItsRunAlone) {
  ir::Model m = typed(kModel);
  const auto feeds = items("x", {1, 4, 3}, 3);
  const InputBatchResult r = apply_input_batch(m, 3, false, feeds, 1);
  ASSERT_EQ(r.log.size(), 2u);
  EXPECT_NE(r.log[0].find("float32[3,4,3]"), std::string::npos) << r.log[0];
  EXPECT_NE(r.log[0].find("3 Reshape targets"), std::string::npos) << r.log[0];
  EXPECT_EQ(ir::verify(*m.graph), std::vector<std::string>{});
  EXPECT_EQ(m.graph->outputs()[0]->type().to_string(), "float32[3,4,3]");
  EXPECT_EQ(m.graph->outputs()[1]->type().to_string(), "float32[3,12]");

  // Independently of the function's own check: stacked items through the result.
  Tensor stacked(DataType::kFloat32, {3, 4, 3});
  for (int i = 0; i < 3; ++i) {
    std::copy_n(feeds[i].at("x").data<float>(), 12, stacked.data<float>() + i * 12);
  }
  const ir::Model single = ir::parse_model(kModel);
  executor::FloatExecutor batched_exec(m), single_exec(single);
  const auto batched = batched_exec.run({{"x", stacked}});
  for (int i = 0; i < 3; ++i) {
    const auto alone = single_exec.run(feeds[i]);
    EXPECT_EQ(item_of(batched.tensors[0], i), values(alone.tensors[0])) << "item " << i;
    EXPECT_EQ(item_of(batched.tensors[1], i), values(alone.tensors[1])) << "item " << i;
  }
}

TEST(InputBatch, SeparateBatchGivesOneInputPerItemJoinedUnderTheInputName) {
  ir::Model m = typed(kModel);
  const auto feeds = items("x", {1, 4, 3}, 2);
  apply_input_batch(m, 2, true, feeds, 1);
  EXPECT_EQ(ir::verify(*m.graph), std::vector<std::string>{});
  ASSERT_EQ(m.graph->inputs().size(), 2u);
  EXPECT_EQ(m.graph->inputs()[0]->name(), "x_0");
  EXPECT_EQ(m.graph->inputs()[1]->name(), "x_1");
  EXPECT_EQ(m.graph->inputs()[1]->type().to_string(), "float32[1,4,3]");
  ASSERT_NE(m.graph->find_value("x"), nullptr);
  EXPECT_EQ(m.graph->find_value("x")->producer()->op_type(), "Concat");

  const ir::Model single = ir::parse_model(kModel);
  executor::FloatExecutor exec(m), single_exec(single);
  const auto out = exec.run({{"x_0", feeds[0].at("x")}, {"x_1", feeds[1].at("x")}});
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(item_of(out.tensors[0], i), values(single_exec.run(feeds[i]).tensors[0]))
        << "item " << i;
  }
}

TEST(InputBatch, AModelThatMixesTheBatchIsRefusedNamingTheOutput) {
  // A reduction over axis 0 adds the items together once there are several.
  ir::Model m = ir::parse_model(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%x: float32[1,4]) -> (%y) {\n"
      "  init %axes: int64[1]{0}\n"
      "  %y = ReduceSum[keepdims=1](%x, %axes)\n"
      "}\n");
  try {
    apply_input_batch(m, 2, false, items("x", {1, 4}, 2), 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("input_batch 2"), std::string::npos) << what;
    EXPECT_NE(what.find("'y'"), std::string::npos) << what;
  }
}

TEST(InputBatch, RefusedForTwoInputsOrAFirstDimOtherThanOne) {
  ir::Model two = ir::parse_model(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%a: float32[1,2], %b: float32[1,2]) -> (%y) {\n"
      "  %y = Add(%a, %b)\n"
      "}\n");
  EXPECT_THROW(apply_input_batch(two, 2, false, {}, 1), Error);
  ir::Model wide = ir::parse_model(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%a: float32[2,2]) -> (%y) {\n"
      "  %y = Relu(%a)\n"
      "}\n");
  EXPECT_THROW(apply_input_batch(wide, 2, false, items("a", {2, 2}, 2), 1), Error);
  // input_batch 1 changes nothing.
  ir::Model one = ir::parse_model(kModel);
  EXPECT_TRUE(apply_input_batch(one, 1, false, {}, 1).log.empty());
  EXPECT_EQ(one.graph->inputs()[0]->type().to_string(), "float32[1,4,3]");
}

}  // namespace
}  // namespace openbpu::pipeline
