#include <gtest/gtest.h>

#include <string_view>

#include "openbpu/frontend/shape_inference.h"
#include "openbpu/ir/dump.h"

namespace openbpu::frontend {
namespace {

using ir::Dim;
using ir::TensorType;
using kernels::DataType;
using kernels::Tensor;

// Opset 18 moved Reduce* axes to an input and added Split's num_outputs; libonnx 1.12 stops at
// opset 17, so these types come from our own rules.
TEST(OwnShapeRules, InferOpset18RevisionsLibonnxDoesNotKnow) {
  ir::Model m;
  m.ir_version = 9;
  m.opsets.push_back({"", 18});
  ir::Graph& g = *m.graph;
  TensorType in;
  in.dtype = DataType::kFloat32;
  in.shape = std::vector<Dim>{Dim::symbolic("N"), Dim::known(8), Dim::known(6)};
  ir::Value* x = g.add_value("x", in);
  g.add_input(x);
  ir::Value* axes = g.add_constant("axes", Tensor::from_values<int64_t>({1}, std::vector<int64_t>{-1}));
  kernels::AttributeMap keep;
  keep.set("keepdims", int64_t{0});
  ir::Value* r = g.add_node({"ReduceMean", {x, axes}, {"r"}, "reduce", "", keep})->output(0);
  kernels::AttributeMap split;
  split.set("axis", int64_t{1});
  split.set("num_outputs", int64_t{3});
  ir::Node* s = g.add_node({"Split", {x}, {"s0", "s1", "s2"}, "split", "", split});
  ir::Value* sum = g.add_node({"Add", {s->output(0), s->output(1)}, {"sum"}, "add", "", {}})->output(0);
  ir::Value* eq = g.add_node({"Equal", {sum, r}, {"eq"}, "eq", "", {}})->output(0);
  g.add_output(eq);

  infer_shapes(m);
  EXPECT_EQ(r->type().to_string(), "float32[N,8]");
  EXPECT_EQ(s->output(2)->type().to_string(), "float32[N,2,6]");
  EXPECT_EQ(sum->type().to_string(), "float32[N,3,6]");
  // [N,3,6] vs [N,8]: 6 and 8 cannot broadcast; the rule leaves the type unknown
  EXPECT_EQ(eq->type().to_string(), "?");
}

// Recomputing after an input shape changed: a graph output no rule can follow keeps its
// declared element type and rank (sizes unknown, symbols kept), so that the model written next
// still declares a shape for it; an intermediate value it cannot follow stays unknown.
TEST(OwnShapeRules, RecomputeKeepsTheDeclaredRankOfAnOutputItCannotFollow) {
  ir::Model m;
  m.opsets.push_back({"", 13});
  m.opsets.push_back({"custom", 1});
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 4}));
  g.add_input(x);
  ir::Value* u = g.add_node({"Mystery", {x}, {"u"}, "mystery", "custom", {}})->output(0);
  ir::Value* y = g.add_node({"Relu", {u}, {"y"}, "relu", "", {}})->output(0);
  TensorType declared;
  declared.dtype = DataType::kFloat32;
  declared.shape = std::vector<Dim>{Dim::symbolic("batch"), Dim::known(4), Dim::known(7)};
  y->set_type(declared);
  u->set_type(declared);
  g.add_output(y);
  infer_shapes(m, /*recompute=*/true);
  EXPECT_EQ(y->type().to_string(), "float32[batch,?,?]");
  EXPECT_EQ(u->type().to_string(), "?");
}

// STFT is typed by our rule, never by libonnx, whose STFT inference gives a well-formed one a
// two-sided frame axis ([1,3,32,2] here) and reads dimensions a malformed signal lacks
// (onnx/onnx#6186: a crash the onnx_import fuzzer found, with a 1-D signal). The
// Relu after it gets its type from libonnx once the STFT's is known.
TEST(OwnShapeRules, StftWellFormedAndMalformed) {
  for (const bool well_formed : {true, false}) {
    SCOPED_TRACE(well_formed ? "signal [1,64,1]" : "signal [64]");
    ir::Model m;
    m.opsets.push_back({"", 17});
    ir::Graph& g = *m.graph;
    ir::Value* x = g.add_value(
        "x", TensorType::of(DataType::kFloat32, well_formed ? kernels::Shape{1, 64, 1} : kernels::Shape{64}));
    g.add_input(x);
    ir::Value* step = g.add_constant("step", Tensor::from_values<int64_t>({}, std::vector<int64_t>{16}));
    ir::Value* window = g.add_constant("window", Tensor(DataType::kFloat32, {32}));
    ir::Value* y = g.add_node({"STFT", {x, step, window}, {"y"}, "stft", "", {}})->output(0);
    ir::Value* z = g.add_node({"Relu", {y}, {"z"}, "relu", "", {}})->output(0);
    g.add_output(z);
    infer_shapes(m);
    EXPECT_EQ(y->type().to_string(), well_formed ? "float32[1,3,17,2]" : "?");
    EXPECT_EQ(z->type().to_string(), well_formed ? "float32[1,3,17,2]" : "?");
  }
}

// libonnx 1.12's inference crashes on some malformed nodes (a sweep over its schemas found
// Conv, ConvTranspose, ConvInteger, GatherND, LayerNormalization, EyeLike, Scan,
// SplitToSequence and STFT; three of them here). It runs in a child process: a crash there
// leaves the types to our own rules (the Relu beside the malformed node) and the model to the
// checks that name its problem. A well-formed Conv still gets its type from libonnx.
TEST(LibonnxInference, CrashOnAMalformedNodeIsContained) {
  struct Case {
    const char* name;
    kernels::Shape x, w;
    const char* op;
  };
  for (const Case& c : {Case{"ConvTranspose, weight rank 2", {1, 1, 3, 3}, {1, 2}, "ConvTranspose"},
                        Case{"Conv, weight rank 0", {1, 1, 2, 1}, {}, "Conv"},
                        Case{"SplitToSequence, split 0", {2, 1, 2}, {}, "SplitToSequence"},
                        Case{"Conv, well-formed", {1, 2, 4, 4}, {8, 2, 1, 1}, "Conv"}}) {
    SCOPED_TRACE(c.name);
    const bool well_formed = std::string_view(c.name).ends_with("well-formed");
    ir::Model m;
    m.opsets.push_back({"", 17});
    ir::Graph& g = *m.graph;
    ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, c.x));
    g.add_input(x);
    ir::Value* w = std::string_view(c.op) == "SplitToSequence"
                       ? g.add_constant("w", Tensor::from_values<int64_t>({}, std::vector<int64_t>{0}))
                       : g.add_constant("w", Tensor(DataType::kFloat32, c.w));
    ir::Value* y = g.add_node({c.op, {x, w}, {"y"}, "node", "", {}})->output(0);
    ir::Value* r = g.add_node({"Relu", {x}, {"r"}, "relu", "", {}})->output(0);
    g.add_output(y);
    g.add_output(r);
    infer_shapes(m);
    EXPECT_EQ(y->type().to_string(), well_formed ? "float32[1,8,4,4]" : "?");
    EXPECT_EQ(r->type().to_string(), TensorType::of(DataType::kFloat32, c.x).to_string());
  }
}

TEST(OwnShapeRules, BroadcastAndCastRules) {
  ir::Model m;
  m.opsets.push_back({"", 19});
  ir::Graph& g = *m.graph;
  ir::Value* a = g.add_value("a", TensorType::of(DataType::kFloat16, {4, 1, 5}));
  ir::Value* b = g.add_value("b", TensorType::of(DataType::kFloat16, {3, 1}));
  g.add_input(a);
  g.add_input(b);
  ir::Value* mul = g.add_node({"Mul", {a, b}, {"m"}, "mul", "", {}})->output(0);
  kernels::AttributeMap to;
  to.set("to", int64_t{1});
  ir::Value* c = g.add_node({"Cast", {mul}, {"c"}, "cast", "", to})->output(0);
  g.add_output(c);
  infer_shapes(m);
  EXPECT_EQ(mul->type().to_string(), "float16[4,3,5]");
  EXPECT_EQ(c->type().to_string(), "float32[4,3,5]");
}

}  // namespace
}  // namespace openbpu::frontend
