#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <set>

#include "openbpu/bpu_support/op_def.h"
#include "openbpu/bpu_support/partitioner.h"
#include "openbpu/common/error.h"
#include "openbpu/ir/dump.h"
#include "openbpu/ir/parse.h"

namespace openbpu::bpu_support {
namespace {

using ir::TensorType;
using kernels::DataType;
using kernels::Tensor;

const MarchSpec& x3() { return simulator::march_spec(March::kBernoulli2); }
const MarchSpec& x5() { return simulator::march_spec(March::kBayesE); }

// A small graph builder: featuremaps with static shapes, constants, nodes.
struct Builder {
  ir::Model model;
  ir::Graph& g = *model.graph;
  int counter = 0;
  ir::Value* input(const std::string& name, kernels::Shape shape) {
    ir::Value* v = g.add_value(name, TensorType::of(DataType::kFloat32, shape));
    g.add_input(v);
    return v;
  }
  ir::Value* constant(kernels::Shape shape) {
    return g.add_constant("c" + std::to_string(counter++), Tensor(DataType::kFloat32, shape));
  }
  ir::Value* int_constant(std::vector<int64_t> values) {
    return g.add_constant("i" + std::to_string(counter++),
                          Tensor::from_values<int64_t>({static_cast<int64_t>(values.size())}, values));
  }
  ir::Node* node(const std::string& op, std::vector<ir::Value*> inputs, kernels::Shape out_shape,
                 kernels::AttributeMap attrs = {}, const std::string& name = "") {
    const std::string n = name.empty() ? op + std::to_string(counter++) : name;
    ir::Node* node = g.add_node({op, std::move(inputs), {n + "_out"}, n, "", std::move(attrs)});
    node->output(0)->set_type(TensorType::of(DataType::kFloat32, out_shape));
    return node;
  }
  void output(ir::Node* n) { g.add_output(n->output(0)); }
};

kernels::AttributeMap ints(const std::string& name, std::vector<int64_t> v) {
  kernels::AttributeMap a;
  a.set(name, std::move(v));
  return a;
}

// ---------------------------------------------------------------- one test per rule

// Each case builds a node that breaks exactly one rule of the table and names that rule.
struct RuleCase {
  std::string rule_id;
  std::function<ir::Node*(Builder&)> make;
  const MarchSpec* march;
};

std::vector<RuleCase> rule_cases() {
  std::vector<RuleCase> c;
  auto conv = [](Builder& b, kernels::Shape x, kernels::Shape w, kernels::AttributeMap a = {},
                 bool const_w = true) {
    ir::Value* weight = const_w ? b.constant(w) : b.input("w", w);
    return b.node("Conv", {b.input("x", x), weight}, {1, w[0], x[2], x[3]}, std::move(a));
  };
  c.push_back({"conv.rank", [&](Builder& b) { return b.node("Conv", {b.input("x", {1, 4, 8}), b.constant({4, 4, 3})}, {1, 4, 8}); }, &x5()});
  c.push_back({"conv.weight", [=](Builder& b) { return conv(b, {1, 4, 8, 8}, {4, 4, 3, 3}, {}, false); }, &x5()});
  c.push_back({"conv.bias", [](Builder& b) {
                 return b.node("Conv", {b.input("x", {1, 4, 8, 8}), b.constant({4, 4, 1, 1}), b.input("bias", {4})}, {1, 4, 8, 8});
               }, &x5()});
  c.push_back({"conv.kernel", [=](Builder& b) { return conv(b, {1, 4, 16, 16}, {4, 4, 9, 9}); }, &x3()});
  c.push_back({"conv.stride", [=](Builder& b) { return conv(b, {1, 4, 16, 16}, {4, 4, 3, 3}, ints("strides", {300, 1})); }, &x5()});
  c.push_back({"conv.dilation", [=](Builder& b) { return conv(b, {1, 4, 64, 64}, {4, 4, 3, 3}, ints("dilations", {32, 32})); }, &x5()});
  c.push_back({"conv.pads", [=](Builder& b) { return conv(b, {1, 4, 8, 8}, {4, 4, 3, 3}, ints("pads", {300, 0, 0, 0})); }, &x5()});
  c.push_back({"conv.channels", [=](Builder& b) { return conv(b, {1, 4096, 8, 8}, {8, 4096, 1, 1}); }, &x3()});
  c.push_back({"tensor.dims", [=](Builder& b) { return conv(b, {1, 4, 8, 70000}, {4, 4, 1, 1}); }, &x5()});
  c.push_back({"deconv.rank", [](Builder& b) { return b.node("ConvTranspose", {b.input("x", {1, 4, 8}), b.constant({4, 4, 2})}, {1, 4, 16}); }, &x5()});
  c.push_back({"deconv.weight", [](Builder& b) { return b.node("ConvTranspose", {b.input("x", {1, 4, 8, 8}), b.input("w", {4, 4, 2, 2})}, {1, 4, 16, 16}); }, &x5()});
  c.push_back({"deconv.bias", [](Builder& b) {
                 return b.node("ConvTranspose", {b.input("x", {1, 4, 8, 8}), b.constant({4, 4, 2, 2}), b.input("bias", {4})}, {1, 4, 16, 16});
               }, &x5()});
  c.push_back({"deconv.kernel", [](Builder& b) { return b.node("ConvTranspose", {b.input("x", {1, 4, 8, 8}), b.constant({4, 4, 16, 16})}, {1, 4, 23, 23}); }, &x5()});
  c.push_back({"deconv.stride", [](Builder& b) {
                 return b.node("ConvTranspose", {b.input("x", {1, 4, 8, 8}), b.constant({4, 4, 2, 2})}, {1, 4, 8, 8}, ints("strides", {20, 20}));
               }, &x5()});
  c.push_back({"deconv.dilation", [](Builder& b) {
                 return b.node("ConvTranspose", {b.input("x", {1, 4, 8, 8}), b.constant({4, 4, 2, 2})}, {1, 4, 18, 18}, ints("dilations", {2, 2}));
               }, &x5()});
  c.push_back({"deconv.channels", [](Builder& b) { return b.node("ConvTranspose", {b.input("x", {1, 4000, 8, 8}), b.constant({4000, 4, 2, 2})}, {1, 4, 16, 16}); }, &x3()});
  c.push_back({"gemm.weight", [](Builder& b) { return b.node("Gemm", {b.input("a", {1, 8}), b.input("b", {8, 4})}, {1, 4}); }, &x5()});
  c.push_back({"gemm.bias", [](Builder& b) { return b.node("Gemm", {b.input("a", {1, 8}), b.constant({8, 4}), b.input("c", {4})}, {1, 4}); }, &x5()});
  c.push_back({"gemm.trans_a", [](Builder& b) {
                 kernels::AttributeMap a;
                 a.set("transA", int64_t{1});
                 return b.node("Gemm", {b.input("a", {8, 1}), b.constant({8, 4})}, {1, 4}, a);
               }, &x5()});
  c.push_back({"gemm.rank", [](Builder& b) { return b.node("Gemm", {b.input("a", {1, 1, 8}), b.constant({8, 4})}, {1, 4}); }, &x5()});
  c.push_back({"matmul.rank", [](Builder& b) { return b.node("MatMul", {b.input("a", {1, 1, 1, 2, 8}), b.input("b", {1, 1, 1, 8, 4})}, {1, 1, 1, 2, 4}); }, &x5()});
  c.push_back({"elementwise.rank", [](Builder& b) { return b.node("Add", {b.input("a", {1, 1, 1, 1, 1, 2}), b.input("b", {1, 1, 1, 1, 1, 2})}, {1, 1, 1, 1, 1, 2}); }, &x5()});
  c.push_back({"elementwise.broadcast", [](Builder& b) { return b.node("Mul", {b.input("a", {2, 4, 8, 8}), b.input("b", {1, 4, 8, 8})}, {2, 4, 8, 8}); }, &x5()});
  c.push_back({"elementwise.constants", [](Builder& b) { return b.node("Sub", {b.constant({1, 4}), b.constant({1, 4})}, {1, 4}); }, &x5()});
  auto typed_input = [](Builder& b, const std::string& name, kernels::Shape shape, DataType type) {
    ir::Value* v = b.input(name, shape);
    v->set_type(TensorType::of(type, std::move(shape)));
    return v;
  };
  c.push_back({"compare.float", [=](Builder& b) { return b.node("Equal", {typed_input(b, "a", {1, 4}, DataType::kInt64), b.constant({1, 4})}, {1, 4}); }, &x5()});
  c.push_back({"where.values", [=](Builder& b) {
                 return b.node("Where", {typed_input(b, "c", {1, 4}, DataType::kBool), typed_input(b, "x", {1, 4}, DataType::kInt64), b.input("y", {1, 4})}, {1, 4});
               }, &x5()});
  c.push_back({"where.rank", [=](Builder& b) {
                 return b.node("Where", {typed_input(b, "c", {1, 1, 1, 1, 1, 2}, DataType::kBool), b.input("x", {1, 1, 1, 1, 1, 2}), b.constant({1})}, {1, 1, 1, 1, 1, 2});
               }, &x5()});
  c.push_back({"gatherelements.indices", [](Builder& b) { return b.node("GatherElements", {b.input("x", {1, 4}), b.input("i", {1, 4})}, {1, 4}); }, &x5()});
  c.push_back({"gatherelements.rank", [](Builder& b) { return b.node("GatherElements", {b.input("x", {1, 1, 1, 1, 1, 1, 2}), b.int_constant({0, 1})}, {1, 1, 1, 1, 1, 1, 2}); }, &x5()});
  c.push_back({"minmax.inputs", [](Builder& b) { return b.node("Max", {b.input("a", {1, 4}), b.input("b", {1, 4}), b.input("c", {1, 4})}, {1, 4}); }, &x5()});
  c.push_back({"gap.rank", [](Builder& b) { return b.node("GlobalAveragePool", {b.input("x", {1, 4, 8})}, {1, 4, 1}); }, &x5()});
  c.push_back({"avgpool.rank", [](Builder& b) { return b.node("AveragePool", {b.input("x", {1, 4, 8})}, {1, 4, 4}, ints("kernel_shape", {2})); }, &x5()});
  c.push_back({"avgpool.kernel", [](Builder& b) { return b.node("AveragePool", {b.input("x", {1, 4, 128, 128})}, {1, 4, 1, 1}, ints("kernel_shape", {100, 100})); }, &x3()});
  c.push_back({"avgpool.stride", [](Builder& b) {
                 kernels::AttributeMap a = ints("kernel_shape", {2, 2});
                 a.set("strides", std::vector<int64_t>{200, 2});
                 return b.node("AveragePool", {b.input("x", {1, 4, 400, 8})}, {1, 4, 2, 4}, a);
               }, &x3()});
  c.push_back({"avgpool.pads", [](Builder& b) {
                 kernels::AttributeMap a = ints("kernel_shape", {2, 2});
                 a.set("pads", std::vector<int64_t>{0, 0, 300, 0});
                 return b.node("AveragePool", {b.input("x", {1, 4, 8, 8})}, {1, 4, 154, 4}, a);
               }, &x5()});
  c.push_back({"reduce.rank", [](Builder& b) { return b.node("ReduceMean", {b.input("x", {1, 2, 3, 4, 5})}, {1, 2, 3, 4, 1}, ints("axes", {4})); }, &x5()});
  c.push_back({"reduce.axes_constant", [](Builder& b) { return b.node("ReduceMean", {b.input("x", {1, 2, 3, 4}), b.input("axes", {1})}, {1, 2, 3, 1}); }, &x5()});
  c.push_back({"resize.rank", [](Builder& b) { return b.node("Resize", {b.input("x", {1, 4, 8})}, {1, 4, 16}); }, &x5()});
  c.push_back({"resize.mode", [](Builder& b) {
                 kernels::AttributeMap a;
                 a.set("mode", std::string("cubic"));
                 return b.node("Resize", {b.input("x", {1, 4, 8, 8})}, {1, 4, 16, 16}, a);
               }, &x5()});
  c.push_back({"resize.coordinates", [](Builder& b) {
                 kernels::AttributeMap a;
                 a.set("coordinate_transformation_mode", std::string("tf_crop_and_resize"));
                 return b.node("Resize", {b.input("x", {1, 4, 8, 8})}, {1, 4, 16, 16}, a);
               }, &x5()});
  c.push_back({"resize.sizes_constant", [](Builder& b) { return b.node("Resize", {b.input("x", {1, 4, 8, 8}), nullptr, b.input("s", {4})}, {1, 4, 16, 16}); }, &x5()});
  c.push_back({"upsample.rank", [](Builder& b) { return b.node("Upsample", {b.input("x", {1, 8}), b.constant({2})}, {1, 16}); }, &x5()});
  c.push_back({"lut.rank", [](Builder& b) { return b.node("Sigmoid", {b.input("x", {1, 1, 1, 1, 1, 2})}, {1, 1, 1, 1, 1, 2}); }, &x5()});
  c.push_back({"pow.exponent", [](Builder& b) { return b.node("Pow", {b.input("x", {1, 4}), b.input("e", {1})}, {1, 4}); }, &x5()});
  c.push_back({"clip.min", [](Builder& b) { return b.node("Clip", {b.input("x", {1, 4}), b.input("lo", {})}, {1, 4}); }, &x5()});
  c.push_back({"clip.max", [](Builder& b) { return b.node("Clip", {b.input("x", {1, 4}), b.constant({}), b.input("hi", {})}, {1, 4}); }, &x5()});
  c.push_back({"maxpool.rank", [](Builder& b) { return b.node("MaxPool", {b.input("x", {1, 4, 8})}, {1, 4, 4}, ints("kernel_shape", {2})); }, &x5()});
  c.push_back({"maxpool.kernel", [](Builder& b) { return b.node("MaxPool", {b.input("x", {1, 4, 128, 128})}, {1, 4, 1, 1}, ints("kernel_shape", {100, 100})); }, &x3()});
  c.push_back({"maxpool.stride", [](Builder& b) {
                 kernels::AttributeMap a = ints("kernel_shape", {2, 2});
                 a.set("strides", std::vector<int64_t>{1, 300});
                 return b.node("MaxPool", {b.input("x", {1, 4, 8, 600})}, {1, 4, 7, 2}, a);
               }, &x5()});
  c.push_back({"maxpool.dilation", [](Builder& b) {
                 kernels::AttributeMap a = ints("kernel_shape", {2, 2});
                 a.set("dilations", std::vector<int64_t>{2, 2});
                 return b.node("MaxPool", {b.input("x", {1, 4, 8, 8})}, {1, 4, 6, 6}, a);
               }, &x5()});
  c.push_back({"maxpool.indices", [](Builder& b) {
                 ir::Node* n = b.g.add_node({"MaxPool", {b.input("x", {1, 4, 8, 8})}, {"mp", "mp_idx"}, "mp", "", ints("kernel_shape", {2, 2})});
                 return n;
               }, &x5()});
  c.push_back({"gmp.rank", [](Builder& b) { return b.node("GlobalMaxPool", {b.input("x", {1, 4, 8})}, {1, 4, 1}); }, &x5()});
  c.push_back({"gmp.size", [](Builder& b) { return b.node("GlobalMaxPool", {b.input("x", {1, 4, 512, 8})}, {1, 4, 1, 1}); }, &x5()});
  c.push_back({"concat.axis", [](Builder& b) {
                 kernels::AttributeMap a;
                 a.set("axis", int64_t{0});
                 return b.node("Concat", {b.input("a", {1, 4}), b.input("b", {1, 4})}, {2, 4}, a);
               }, &x5()});
  c.push_back({"split.axis", [](Builder& b) { return b.node("Split", {b.input("x", {2, 4})}, {1, 4}); }, &x5()});
  c.push_back({"split.sizes", [](Builder& b) {
                 kernels::AttributeMap a;
                 a.set("axis", int64_t{1});
                 return b.node("Split", {b.input("x", {1, 4}), b.input("s", {2})}, {1, 2}, a);
               }, &x5()});
  for (auto [id, index] : {std::pair{"slice.starts", 1}, std::pair{"slice.ends", 2}, std::pair{"slice.axes", 3},
                           std::pair{"slice.steps", 4}}) {
    c.push_back({id, [index](Builder& b) {
                   std::vector<ir::Value*> in{b.input("x", {1, 8}), b.int_constant({0}), b.int_constant({4}),
                                              b.int_constant({1}), b.int_constant({1})};
                   in[static_cast<size_t>(index)] = b.input("dyn", {1});
                   return b.node("Slice", in, {1, 4});
                 }, &x5()});
  }
  c.push_back({"reshape.shape", [](Builder& b) { return b.node("Reshape", {b.input("x", {1, 8}), b.input("s", {2})}, {2, 4}); }, &x5()});
  c.push_back({"squeeze.axes", [](Builder& b) { return b.node("Squeeze", {b.input("x", {1, 8}), b.input("a", {1})}, {8}); }, &x5()});
  c.push_back({"unsqueeze.axes", [](Builder& b) { return b.node("Unsqueeze", {b.input("x", {8}), b.input("a", {1})}, {1, 8}); }, &x5()});
  c.push_back({"transpose.rank", [](Builder& b) { return b.node("Transpose", {b.input("x", {1, 1, 1, 1, 1, 2})}, {2, 1, 1, 1, 1, 1}); }, &x5()});
  c.push_back({"pad.mode", [](Builder& b) {
                 kernels::AttributeMap a;
                 a.set("mode", std::string("reflect"));
                 return b.node("Pad", {b.input("x", {1, 4, 8, 8}), b.int_constant({0, 0, 1, 1, 0, 0, 1, 1})}, {1, 4, 10, 10}, a);
               }, &x5()});
  c.push_back({"pad.pads", [](Builder& b) { return b.node("Pad", {b.input("x", {1, 4, 8, 8}), b.input("p", {8})}, {1, 4, 10, 10}); }, &x5()});
  c.push_back({"pad.value", [](Builder& b) {
                 ir::Value* v = b.g.add_constant("padv", Tensor::scalar(1.0f));
                 return b.node("Pad", {b.input("x", {1, 4, 8, 8}), b.int_constant({0, 0, 1, 1, 0, 0, 1, 1}), v}, {1, 4, 10, 10});
               }, &x5()});
  c.push_back({"d2s.rank", [](Builder& b) { return b.node("DepthToSpace", {b.input("x", {1, 16, 8})}, {1, 4, 16}); }, &x5()});
  c.push_back({"s2d.rank", [](Builder& b) { return b.node("SpaceToDepth", {b.input("x", {1, 4, 8})}, {1, 16, 4}); }, &x5()});
  c.push_back({"gather.indices", [](Builder& b) { return b.node("Gather", {b.input("x", {4, 8}), b.input("i", {2})}, {2, 8}); }, &x5()});
  c.push_back({"gather.rank", [](Builder& b) { return b.node("Gather", {b.input("x", {1, 1, 1, 1, 8}), b.int_constant({0})}, {1, 1, 1, 1, 8}); }, &x5()});
  c.push_back({"reducemax.rank", [](Builder& b) { return b.node("ReduceMax", {b.input("x", {1, 2, 3, 4, 5})}, {1, 2, 3, 4, 1}, ints("axes", {4})); }, &x5()});
  c.push_back({"reducemax.axes_constant", [](Builder& b) { return b.node("ReduceMax", {b.input("x", {1, 2, 3, 4}), b.input("axes", {1})}, {1, 2, 3, 1}); }, &x5()});
  c.push_back({"expand.shape", [](Builder& b) { return b.node("Expand", {b.input("x", {1, 4}), b.input("s", {2})}, {3, 4}); }, &x5()});
  c.push_back({"expand.rank", [](Builder& b) { return b.node("Expand", {b.input("x", {1, 4}), b.int_constant({1, 1, 1, 1, 1, 2, 4})}, {1, 1, 1, 1, 1, 2, 4}); }, &x5()});
  c.push_back({"tile.repeats", [](Builder& b) { return b.node("Tile", {b.input("x", {1, 4}), b.input("r", {2})}, {2, 8}); }, &x5()});
  c.push_back({"tile.rank", [](Builder& b) { return b.node("Tile", {b.input("x", {1, 2, 3, 4}), b.int_constant({2, 2, 2, 1})}, {2, 4, 6, 4}); }, &x5()});
  for (const char* op : {"ArgMax", "ArgMin"}) {
    auto arg = [op](Builder& b, kernels::Shape x, int64_t axis, int64_t keepdims = 1, int64_t last = 0) {
      kernels::AttributeMap a;
      a.set("axis", axis);
      a.set("keepdims", keepdims);
      a.set("select_last_index", last);
      kernels::Shape out = x;
      out[size_t(axis < 0 ? axis + int64_t(x.size()) : axis)] = 1;
      return b.node(op, {b.input("x", x)}, out, a);
    };
    const std::string p = std::string(op) == "ArgMax" ? "argmax." : "argmin.";
    c.push_back({p + "rank", [=](Builder& b) { return arg(b, {1, 8, 4}, 1); }, &x5()});
    c.push_back({p + "axis", [=](Builder& b) { return arg(b, {1, 8, 4, 4}, 2); }, &x3()});
    c.push_back({p + "extent", [=](Builder& b) { return arg(b, {1, 65, 4, 4}, -3); }, &x5()});
    c.push_back({p + "select_last_index", [=](Builder& b) { return arg(b, {1, 8, 4, 4}, 1, 1, 1); }, &x5()});
    c.push_back({p + "keepdims", [=](Builder& b) { return arg(b, {1, 8, 4, 4}, 1, 2); }, &x5()});
  }
  auto softmax = [](Builder& b, kernels::Shape x, int64_t axis) {
    kernels::AttributeMap a;
    a.set("axis", axis);
    return b.node("Softmax", {b.input("x", x)}, x, a);
  };
  c.push_back({"softmax.rank", [=](Builder& b) { return softmax(b, {1, 8, 4}, 1); }, &x5()});
  c.push_back({"softmax.axis", [=](Builder& b) { return softmax(b, {1, 8, 4, 4}, 2); }, &x3()});
  return c;
}

std::string rule_text(const std::string& id, const MarchSpec& m) {
  for (const OpDef& s : op_defs()) {
    for (const Constraint& c : s.constraints) {
      if (c.id == id) return c.rule(m);
    }
  }
  return "";
}

TEST(OpSupportTable, EveryRuleIsTestedByANodeThatBreaksOnlyIt) {
  std::set<std::string> tested;
  for (const RuleCase& rc : rule_cases()) {
    Builder b;
    ir::Node* n = rc.make(b);
    const SupportVerdict v = check_node(*n, *rc.march);
    EXPECT_FALSE(v.on_bpu_possible) << rc.rule_id;
    ASSERT_EQ(v.broken_rules.size(), 1u) << rc.rule_id << ": " << v.reason();
    EXPECT_EQ(v.broken_rules[0], rule_text(rc.rule_id, *rc.march)) << rc.rule_id;
    tested.insert(rc.rule_id);
  }
  for (const OpDef& s : op_defs()) {
    for (const Constraint& c : s.constraints) {
      EXPECT_TRUE(tested.count(std::string(c.id))) << "rule '" << c.id << "' of " << s.op_type
                                                   << " has no test case";
    }
  }
}

// The registry's stages agree: what the quantizer emits for a row lowers the way the row says.
TEST(OpDefRegistry, RowsAgreeAcrossStages) {
  std::set<simulator::isa::ElementwiseOp> elementwise;
  std::set<std::string_view> without_lowering;
  for (const OpDef& d : op_defs()) {
    SCOPED_TRACE(std::string(d.op_type));
    const OpDef* first = find_op_def_by_bpu_type(d.bpu_type);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->lower, d.lower) << "rows of " << d.bpu_type << " lower differently";
    EXPECT_EQ(find_op_def(d.op_type), &d) << "two rows for one operator";
    EXPECT_EQ(d.kind == OpKind::kLut, d.quantize == QuantizeAs::kTable);
    EXPECT_EQ(d.kind == OpKind::kPassive, d.quantize == QuantizeAs::kMove || d.quantize == QuantizeAs::kConcat);
    const bool accumulating = d.quantize == QuantizeAs::kConv || d.quantize == QuantizeAs::kGemm ||
                              d.quantize == QuantizeAs::kMatMul;
    EXPECT_EQ(accumulating, d.weight_axis != nullptr);
    if (d.quantize == QuantizeAs::kElementwise) {
      EXPECT_EQ(d.lower, LowerAs::kElementwise);
      EXPECT_TRUE(elementwise.insert(d.elementwise).second) << "two rows share an elementwise operation";
    }
    if (d.lower == LowerAs::kNone) without_lowering.insert(d.op_type);
  }
  // Every row placed on the BPU has a lowering.
  EXPECT_EQ(without_lowering, std::set<std::string_view>{});
}

// The output-channel axis of the constant weight, as calibration and the plan read it.
TEST(OpDefRegistry, WeightAxisIsTheOutputChannelAxis) {
  Builder b;
  ir::Value* x = b.input("x", {1, 8, 4, 4});
  auto axis = [](const ir::Node* n) { return find_op_def(*n)->weight_axis(*n); };
  EXPECT_EQ(axis(b.node("Conv", {x, b.constant({16, 8, 1, 1})}, {1, 16, 4, 4})), 0);
  EXPECT_EQ(axis(b.node("ConvTranspose", {x, b.constant({8, 16, 2, 2})}, {1, 16, 8, 8})), 1);
  kernels::AttributeMap trans_b;
  trans_b.set("transB", int64_t{1});
  ir::Value* a = b.input("a", {2, 8});
  EXPECT_EQ(axis(b.node("Gemm", {a, b.constant({8, 16})}, {2, 16})), 1);
  EXPECT_EQ(axis(b.node("Gemm", {a, b.constant({16, 8})}, {2, 16}, trans_b)), 0);
  ir::Value* seq = b.input("seq", {1, 5, 8});
  EXPECT_EQ(axis(b.node("MatMul", {seq, b.constant({8, 16})}, {1, 5, 16})), 1);
  EXPECT_EQ(axis(b.node("MatMul", {seq, b.constant({1, 8, 16})}, {1, 5, 16})), 2);  // [..., K, N]: N
}

TEST(OpSupportTable, RuleTextsCarryTheMarchNumbers) {
  EXPECT_EQ(rule_text("conv.kernel", x3()), "kernel H and W must be in [1, 7]");
  EXPECT_EQ(rule_text("conv.kernel", x5()), "kernel H and W must be in [1, 31]");
  Builder b;
  ir::Node* n = b.node("NonMaxSuppression", {b.input("boxes", {1, 4, 4})}, {1, 3});
  EXPECT_EQ(check_node(*n, x5()).reason(), "operator NonMaxSuppression has no BPU implementation");
  EXPECT_NE(supported_ops_markdown().find("| Conv | HzSQuantizedConv | compute | no |"), std::string::npos);
}

TEST(OpSupportTable, ArgMaxRulesFollowTheMarch) {
  const MarchSpec& nash = simulator::march_spec(March::kNashE);
  auto verdict = [](kernels::Shape x, int64_t axis, const MarchSpec& m) {
    Builder b;
    kernels::AttributeMap a;
    a.set("axis", axis);
    kernels::Shape out = x;
    out[size_t(axis)] = 1;
    return check_node(*b.node("ArgMax", {b.input("x", x)}, out, a), m);
  };
  // nash-e: any rank and axis, up to 32767 elements along it.
  EXPECT_TRUE(verdict({2, 1000, 7}, 1, nash).on_bpu_possible);
  EXPECT_TRUE(verdict({2, 7, 32767}, 2, nash).on_bpu_possible);
  EXPECT_EQ(verdict({2, 40000}, 1, nash).reason(), "the reduced axis must have [1, 32767] elements");
  EXPECT_EQ(rule_text("argmax.rank", nash), "input may have any rank");
  // bayes-e and bernoulli2: 4-D, channel axis, C <= 64.
  EXPECT_TRUE(verdict({1, 64, 8, 8}, 1, x5()).on_bpu_possible);
  EXPECT_TRUE(verdict({1, 64, 8, 8}, 1, x3()).on_bpu_possible);
  EXPECT_EQ(verdict({1, 8, 10}, 2, x5()).reason(), "input must be 4-D (N, C, H, W); axis must be 1 (C)");
}

// A control-flow node that stays (control_flow_flattening could not flatten it) runs on the CPU,
// and the reason names what of its graphs the BPU could run.
TEST(OpSupportTable, ControlFlowRunsOnTheCpuNamingWhatItsGraphsCouldRunOnTheBpu) {
  Builder b;
  auto body = std::make_shared<ir::Graph>();
  ir::Value* x = body->add_outer_scope_value("x");
  ir::Node* mul = body->add_node({"Mul", {x, x}, {"sq"}, "sq", "", {}});
  mul->output(0)->set_type(TensorType::of(DataType::kFloat32, {1, 4, 8, 8}));
  ir::Node* nms = body->add_node({"NonMaxSuppression", {mul->output(0), mul->output(0)}, {"kept"}, "nms", "", {}});
  body->add_output(nms->output(0));
  ir::Node* loop = b.node("Loop", {b.input("trips", {}), nullptr}, {1, 4, 8, 8});
  loop->graph_attrs().push_back({"body", {body}, false});
  const SupportVerdict v = check_node(*loop, x5());
  EXPECT_FALSE(v.on_bpu_possible);
  EXPECT_EQ(v.reason(), "control flow runs on the CPU with its graphs (2 nodes; the BPU could run their Mul)");
}

// A tensor whose shape depends on the data (behind an If with branches of other shapes) keeps its
// reader on the CPU, naming the tensor.
TEST(OpSupportTable, ATensorWithoutAStaticShapeKeepsItsReaderOnTheCpu) {
  Builder b;
  ir::Value* x = b.g.add_value("x", TensorType{DataType::kFloat32, std::vector<ir::Dim>{ir::Dim::known(1), ir::Dim::known(4),
                                                                                      ir::Dim::symbolic("h"), ir::Dim::known(8)}});
  b.g.add_input(x);
  ir::Node* conv = b.node("Conv", {x, b.constant({4, 4, 1, 1})}, {1, 4, 8, 8});
  const SupportVerdict v = check_node(*conv, x5());
  EXPECT_FALSE(v.on_bpu_possible);
  EXPECT_EQ(v.reason(), "the shape of 'x' (float32[1,4,h,8]) is not static");
  ir::Node* fixed = b.node("Conv", {b.input("y", {1, 4, 8, 8}), b.constant({4, 4, 1, 1})}, {1, 4, 8, 8});
  EXPECT_TRUE(check_node(*fixed, x5()).on_bpu_possible);  // must not fire
}

TEST(OpSupportTable, SoftmaxRulesAndDefaultFollowTheMarch) {
  const MarchSpec& nash = simulator::march_spec(March::kNashE);
  auto graph = [](Builder& b, kernels::Shape x, int64_t axis) {
    ir::Value* in = b.input("x", x);
    kernels::Shape w = {x[1], x[1], 1, 1};
    ir::Node* conv = b.node("Conv", {in, b.constant(w)}, x, {}, "conv");
    kernels::AttributeMap a;
    a.set("axis", axis);
    ir::Node* sm = b.node("Softmax", {conv->output(0)}, x, a, "softmax");
    b.output(sm);
    return sm;
  };
  {  // nash-e: on the BPU without run_on_bpu, along any axis
    Builder b;
    ir::Node* sm = graph(b, {1, 8, 4, 6}, 0);
    const Partition p = partition_graph(b.g, nash, {});
    EXPECT_EQ(p.at(sm).unit, Unit::kBpu);
  }
  {  // bayes-e: the CPU unless run_on_bpu; axes 1..3 of a 4-D input
    Builder b;
    ir::Node* sm = graph(b, {1, 8, 4, 6}, -1);
    EXPECT_EQ(partition_graph(b.g, x5(), {}).at(sm).reason, "Softmax runs on the CPU of bayes-e unless run_on_bpu names it");
    PlacementOverrides o;
    o.run_on_bpu.insert("softmax");
    EXPECT_EQ(partition_graph(b.g, x5(), o).at(sm).unit, Unit::kBpu);
  }
  {
    Builder b;
    ir::Node* sm = graph(b, {1, 8, 4, 6}, 0);
    PlacementOverrides o;
    o.run_on_bpu.insert("softmax");
    EXPECT_EQ(partition_graph(b.g, x5(), o).at(sm).reason, "axis must be 1, 2 or 3");
  }
  EXPECT_EQ(rule_text("softmax.axis", x3()), "axis must be 1 (C)");
  EXPECT_EQ(rule_text("softmax.axis", nash), "axis may be any axis");
  EXPECT_NE(supported_ops_markdown().find("| Softmax | HzQuantizedSoftmax | compute |"), std::string::npos);
}

TEST(Partitioner, NodesReadingArgMaxIndicesStayOnTheCpu) {
  Builder b;
  ir::Value* x = b.input("x", {1, 3, 8, 8});
  ir::Node* conv = b.node("Conv", {x, b.constant({8, 3, 1, 1})}, {1, 8, 8, 8}, {}, "conv");
  kernels::AttributeMap a;
  a.set("axis", int64_t{1});
  ir::Node* am = b.node("ArgMax", {conv->output(0)}, {1, 1, 8, 8}, a, "argmax");
  am->output(0)->set_type(TensorType::of(DataType::kInt64, {1, 1, 8, 8}));
  ir::Node* flat = b.node("Reshape", {am->output(0), b.int_constant({1, 64})}, {1, 64}, {}, "flat");
  b.output(flat);
  const Partition p = partition_graph(b.g, x5(), {});
  EXPECT_EQ(p.at(conv).unit, Unit::kBpu);
  EXPECT_EQ(p.at(am).unit, Unit::kBpu);
  EXPECT_EQ(p.at(am).subgraph, 0);
  EXPECT_EQ(p.at(flat).unit, Unit::kCpu);
  EXPECT_EQ(p.at(flat).reason,
            "input 'argmax_out' holds computed integers (int64), not a feature map the BPU quantizes");
}

// ---------------------------------------------------------------- partitioner

TEST(Partitioner, SplitsBpuRegionsAtCpuNodesAndKeepsPassiveEdgesOnCpu) {
  Builder b;
  ir::Value* x = b.input("x", {1, 3, 8, 8});
  ir::Node* head = b.node("Reshape", {x, b.int_constant({1, 3, 8, 8})}, {1, 3, 8, 8}, {}, "head_reshape");
  ir::Node* c1 = b.node("Conv", {head->output(0), b.constant({4, 3, 3, 3})}, {1, 4, 8, 8}, {}, "conv1");
  ir::Node* r1 = b.node("Relu", {c1->output(0)}, {1, 4, 8, 8}, {}, "relu1");
  ir::Node* nms = b.node("Erf", {r1->output(0)}, {1, 4, 8, 8}, {}, "erf_cpu");
  ir::Node* c2 = b.node("Conv", {nms->output(0), b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "conv2");
  ir::Node* tail = b.node("Transpose", {c2->output(0)}, {1, 8, 8, 4}, ints("perm", {0, 2, 3, 1}), "tail_transpose");
  ir::Node* sm = b.node("Softmax", {tail->output(0)}, {1, 8, 8, 4}, {}, "softmax");
  b.output(sm);
  PlacementOverrides o;
  o.run_on_cpu.insert("erf_cpu");
  const Partition p = partition_graph(b.g, x5(), o);
  EXPECT_EQ(p.at(head).unit, Unit::kCpu);
  EXPECT_EQ(p.at(head).reason, "passive operator with no BPU producer stays on the CPU");
  EXPECT_EQ(p.at(c1).subgraph, 0);
  EXPECT_EQ(p.at(r1).subgraph, 0);
  EXPECT_EQ(p.at(nms).unit, Unit::kCpu);
  EXPECT_EQ(p.at(nms).reason, "run_on_cpu names it");
  EXPECT_TRUE(p.at(nms).bpu_capable);
  EXPECT_EQ(p.at(c2).subgraph, 1);
  EXPECT_EQ(p.at(tail).unit, Unit::kCpu);
  EXPECT_EQ(p.at(sm).unit, Unit::kCpu);
  EXPECT_EQ(p.at(sm).reason, "Softmax runs on the CPU of bayes-e unless run_on_bpu names it");
  EXPECT_TRUE(p.at(sm).bpu_capable);
  EXPECT_TRUE(p.at(head).bpu_capable);
  EXPECT_EQ(p.subgraph_count, 2);
}

// keep_edge_operators_on_bpu: the passive operators at the BPU region's edges stay on it (the
// reference's "unitconv"); one that no passive path joins to a computing BPU node still goes.
TEST(Partitioner, TheEdgeOptionKeepsPassiveEdgesOnTheBpu) {
  Builder b;
  ir::Value* x = b.input("x", {1, 3, 8, 8});
  ir::Node* head = b.node("Transpose", {x}, {1, 8, 8, 3}, ints("perm", {0, 2, 3, 1}), "head_transpose");
  ir::Node* back = b.node("Transpose", {head->output(0)}, {1, 3, 8, 8}, ints("perm", {0, 3, 1, 2}), "back_transpose");
  ir::Node* conv = b.node("Conv", {back->output(0), b.constant({4, 3, 1, 1})}, {1, 4, 8, 8}, {}, "conv");
  ir::Node* tail = b.node("Reshape", {conv->output(0), b.int_constant({1, 256})}, {1, 256}, {}, "tail_reshape");
  ir::Value* z = b.input("z", {1, 4});
  ir::Node* alone = b.node("Reshape", {z, b.int_constant({2, 2})}, {2, 2}, {}, "alone");
  b.output(tail);
  b.output(alone);
  PlacementOverrides o;
  o.edge_operators_on_bpu = true;
  const Partition p = partition_graph(b.g, x5(), o);
  for (const ir::Node* n : {head, back, conv, tail}) EXPECT_EQ(p.at(n).unit, Unit::kBpu) << n->name();
  EXPECT_EQ(p.subgraph_count, 1);
  const Partition by_default = partition_graph(b.g, x5(), {});
  for (const ir::Node* n : {head, back, tail}) EXPECT_EQ(by_default.at(n).unit, Unit::kCpu) << n->name();
  EXPECT_EQ(p.at(alone).unit, Unit::kCpu);  // no computing BPU node to stay with
  EXPECT_EQ(p.at(alone).reason, "passive operator with no computing BPU neighbour stays on the CPU");
}

TEST(Partitioner, ANameStageTwoExpandedStandsForItsParts) {
  // recurrent_unrolling names the nodes of an unrolled LSTM "<lstm>.<part>", control_flow_flattening
  // a Loop body's copies "<node>@<i>": run_on_cpu 'lstm' / 'body_conv' places them all; 'lstmx' is
  // another node.
  Builder b;
  ir::Value* x = b.input("x", {1, 4, 8, 8});
  ir::Node* c1 = b.node("Conv", {x, b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "conv1");
  ir::Node* s1 = b.node("Sigmoid", {c1->output(0)}, {1, 4, 8, 8}, {}, "lstm.t0.i");
  ir::Node* s2 = b.node("Tanh", {s1->output(0)}, {1, 4, 8, 8}, {}, "lstm.t0.g");
  ir::Node* c2 = b.node("Conv", {s2->output(0), b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "lstmx");
  ir::Node* u0 = b.node("Conv", {c2->output(0), b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "body_conv@0");
  ir::Node* u1 = b.node("Conv", {u0->output(0), b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "body_conv@1");
  b.output(u1);
  PlacementOverrides o;
  o.run_on_cpu.insert("lstm");
  o.run_on_cpu.insert("body_conv");
  const Partition p = partition_graph(b.g, x5(), o);
  EXPECT_EQ(p.at(s1).unit, Unit::kCpu);
  EXPECT_EQ(p.at(s2).unit, Unit::kCpu);
  EXPECT_EQ(p.at(s2).reason, "run_on_cpu names it");
  EXPECT_EQ(p.at(c2).unit, Unit::kBpu);  // "lstmx" is another node
  EXPECT_EQ(p.at(u0).unit, Unit::kCpu);
  EXPECT_EQ(p.at(u1).unit, Unit::kCpu);
  PlacementOverrides missing;
  missing.run_on_cpu.insert("gru");
  try {
    partition_graph(b.g, x5(), missing);
    ADD_FAILURE() << "an unknown name must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'gru' given in run_on_cpu is not in the model"), std::string::npos);
  }
}

TEST(Partitioner, NeverJoinsASubgraphItDependsOnThroughTheCpu) {
  // conv1 -> cpu -> add(conv1, cpu): add may not join conv1's subgraph (it would need the CPU
  // result computed from that same subgraph's output in the middle of the subgraph).
  Builder b;
  ir::Value* x = b.input("x", {1, 4, 8, 8});
  ir::Node* c1 = b.node("Conv", {x, b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "conv1");
  ir::Node* cpu = b.node("Erf", {c1->output(0)}, {1, 4, 8, 8}, {}, "erf");
  ir::Node* add = b.node("Add", {c1->output(0), cpu->output(0)}, {1, 4, 8, 8}, {}, "add");
  b.output(add);
  PlacementOverrides o;
  o.run_on_cpu.insert("erf");
  const Partition p = partition_graph(b.g, x5(), o);
  EXPECT_EQ(p.at(c1).subgraph, 0);
  EXPECT_EQ(p.at(add).subgraph, 1);
  EXPECT_EQ(p.subgraph_count, 2);
}

TEST(Partitioner, BranchesFromOneCpuTensorThatMeetAreOneSubgraph) {
  // The tf2onnx pattern: a CPU reshape at the input feeds two convolutions whose results meet in
  // a Max. Each branch starts a subgraph; the Max merges them.
  Builder b;
  ir::Value* x = b.input("x", {1, 4, 8, 8});
  ir::Node* head = b.node("Reshape", {x, b.int_constant({1, 4, 8, 8})}, {1, 4, 8, 8}, {}, "head");
  ir::Node* c1 = b.node("Conv", {head->output(0), b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "conv1");
  ir::Node* c2 = b.node("Conv", {head->output(0), b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "conv2");
  ir::Node* max = b.node("Max", {c1->output(0), c2->output(0)}, {1, 4, 8, 8}, {}, "max");
  ir::Node* c3 = b.node("Conv", {max->output(0), b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "conv3");
  b.output(c3);
  const Partition p = partition_graph(b.g, x5(), {});
  EXPECT_EQ(p.at(head).unit, Unit::kCpu);
  for (const ir::Node* n : {c1, c2, max, c3}) EXPECT_EQ(p.at(n).subgraph, 0) << n->name();
  EXPECT_EQ(p.subgraph_count, 1);
}

TEST(Partitioner, BranchesDoNotMergeAcrossACpuPath) {
  // conv1 -> erf (CPU) -> conv2 -> add(conv2, conv0): conv0's branch and conv2's may merge only
  // if neither depends on the other through the CPU; conv2 depends on conv1 through erf, so add
  // joins conv0's subgraph or conv2's but never unites conv1's with conv2's.
  Builder b;
  ir::Value* x = b.input("x", {1, 4, 8, 8});
  ir::Node* c1 = b.node("Conv", {x, b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "conv1");
  ir::Node* erf = b.node("Erf", {c1->output(0)}, {1, 4, 8, 8}, {}, "erf");
  ir::Node* c2 = b.node("Conv", {erf->output(0), b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "conv2");
  ir::Node* add = b.node("Add", {c1->output(0), c2->output(0)}, {1, 4, 8, 8}, {}, "add");
  b.output(add);
  PlacementOverrides o;
  o.run_on_cpu.insert("erf");
  const Partition p = partition_graph(b.g, x5(), o);
  EXPECT_EQ(p.at(c1).subgraph, 0);
  EXPECT_EQ(p.at(c2).subgraph, 1);
  EXPECT_EQ(p.at(add).subgraph, 1);  // with conv2; conv1's subgraph is behind the CPU for it
  EXPECT_EQ(p.subgraph_count, 2);
}

TEST(Partitioner, NeverJoinsASubgraphThatAnUpstreamSubgraphDependsOnThroughTheCpu) {
  // conv_a and conv_b read x; erf(conv_a) on the CPU feeds add_b (with conv_b): conv_b's subgraph
  // depends on conv_a's through the CPU. max(conv_a, conv_b) reads both: joining conv_a's
  // subgraph would make it need conv_b's output, which needs erf of conv_a's: a cycle. It joins
  // conv_b's, and the two never merge.
  Builder b;
  ir::Value* x = b.input("x", {1, 4, 8, 8});
  ir::Node* ca = b.node("Conv", {x, b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "conv_a");
  ir::Node* cb = b.node("Conv", {x, b.constant({4, 4, 1, 1})}, {1, 4, 8, 8}, {}, "conv_b");
  ir::Node* erf = b.node("Erf", {ca->output(0)}, {1, 4, 8, 8}, {}, "erf");
  ir::Node* add = b.node("Add", {cb->output(0), erf->output(0)}, {1, 4, 8, 8}, {}, "add_b");
  ir::Node* max = b.node("Max", {ca->output(0), cb->output(0)}, {1, 4, 8, 8}, {}, "max");
  b.output(add);
  b.output(max);
  PlacementOverrides o;
  o.run_on_cpu.insert("erf");
  const Partition p = partition_graph(b.g, x5(), o);
  EXPECT_EQ(p.at(ca).subgraph, 0);
  EXPECT_EQ(p.at(cb).subgraph, 1);
  EXPECT_EQ(p.at(add).subgraph, 1);
  EXPECT_EQ(p.at(max).subgraph, 1);
  EXPECT_EQ(p.subgraph_count, 2);
}

TEST(Partitioner, RunOnCpuOfANodeTheBpuCannotRunKeepsTheBpusRuleAsTheReason) {
  Builder b;
  ir::Value* x = b.input("x", {1, 4, 8, 8});
  ir::Node* nz = b.node("NonZero", {x}, {4, 256}, {}, "nonzero");
  ir::Node* erf = b.node("Erf", {x}, {1, 4, 8, 8}, {}, "erf");
  b.output(nz);
  b.output(erf);
  PlacementOverrides o;
  o.run_on_cpu.insert("nonzero");
  o.run_on_cpu.insert("erf");
  const Partition p = partition_graph(b.g, x5(), o);
  EXPECT_EQ(p.at(nz).unit, Unit::kCpu);
  EXPECT_EQ(p.at(nz).reason, "operator NonZero has no BPU implementation");
  EXPECT_FALSE(p.at(nz).bpu_capable);
  EXPECT_EQ(p.at(erf).reason, "run_on_cpu names it");
  EXPECT_TRUE(p.at(erf).bpu_capable);
}

TEST(Partitioner, OverridesMustNameExistingNodes) {
  Builder b;
  b.output(b.node("Relu", {b.input("x", {1, 4})}, {1, 4}, {}, "r"));
  PlacementOverrides o;
  o.run_on_bpu.insert("no_such_node");
  EXPECT_THROW(partition_graph(b.g, x5(), o), Error);
}

// ---------------------------------------------------------------- subgraph grouping

// A graph in text form (ir/parse.h) partitioned on bayes-e, with its placement as one line:
// "node=subgraph" or "node=CPU" in graph order.
struct TextPartition {
  ir::Model model;
  Partition part;
  std::string placement() const {
    std::string out;
    for (const NodePlacement& p : part.nodes) {
      out += (out.empty() ? "" : " ") + p.node->name() + "=" +
             (p.unit == Unit::kCpu ? std::string("CPU") : std::to_string(p.subgraph));
    }
    return out;
  }
};

TextPartition partition_text(const std::string& graph, std::set<std::string> run_on_cpu = {}) {
  TextPartition t{ir::parse_model(graph), {}};
  PlacementOverrides o;
  o.run_on_cpu = std::move(run_on_cpu);
  t.part = partition_graph(*t.model.graph, x5(), o);
  return t;
}

TEST(Partitioner, NeverJoinsASubgraphThatAPathThroughAnotherSubgraphLeadsFrom) {
  // a -> erf (CPU) -> d, which bd puts into b's subgraph; b -> erf (CPU) -> cc in c's subgraph.
  // So c's subgraph depends on a's through b's: ac, reading a and c, may join only c's (a
  // grouping that checked only the subgraphs ac depends on directly joined both: a cycle).
  const TextPartition t = partition_text(
      "graph g (%x: float32[1,4,8,8]) -> (%cc, %bd, %ac) {\n"
      "  init %wa: float32[4,4,1,1]\n"
      "  init %wb: float32[4,4,1,1]\n"
      "  init %wc: float32[4,4,1,1]\n"
      "  init %wd: float32[4,4,1,1]\n"
      "  %a: float32[1,4,8,8] = Conv(%x, %wa)\n"
      "  %b: float32[1,4,8,8] = Conv(%x, %wb)\n"
      "  %eb: float32[1,4,8,8] = Erf(%b)\n"
      "  %c: float32[1,4,8,8] = Conv(%x, %wc)\n"
      "  %cc: float32[1,4,8,8] = Add(%c, %eb)\n"
      "  %ea: float32[1,4,8,8] = Erf(%a)\n"
      "  %d: float32[1,4,8,8] = Conv(%ea, %wd)\n"
      "  %bd: float32[1,4,8,8] = Add(%b, %d)\n"
      "  %ac: float32[1,4,8,8] = Add(%a, %c)\n"
      "}\n",
      {"ea", "eb"});
  EXPECT_EQ(t.placement(), "a=0 b=1 eb=CPU c=2 cc=2 ea=CPU d=1 bd=1 ac=2");
  EXPECT_EQ(t.part.subgraph_count, 3);
}

// Why `group` is not a valid grouping of `nodes` ("" if it is): BPU nodes (only) in subgraphs
// numbered by first appearance; no subgraph holds two nodes with a node outside it on a path
// between them (convex); the subgraphs and CPU nodes form an acyclic sequence of segments; and
// no two subgraphs reading one value the BPU does not produce are independent (they would merge).
std::string grouping_problem(const std::vector<const ir::Node*>& nodes, const std::vector<bool>& bpu,
                             const std::vector<int>& group) {
  const size_t n = nodes.size();
  std::map<const ir::Node*, size_t> index;
  for (size_t i = 0; i < n; ++i) index[nodes[i]] = i;
  std::vector<std::vector<size_t>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    for (const ir::Value* in : nodes[i]->inputs()) {
      if (in != nullptr && in->producer() != nullptr) consumers[index.at(in->producer())].push_back(i);
    }
  }
  int next = 0;
  for (size_t i = 0; i < n; ++i) {
    if (bpu[i] != (group[i] >= 0)) return nodes[i]->name() + ": BPU mark and subgraph disagree";
    if (group[i] > next) return nodes[i]->name() + ": subgraph " + std::to_string(group[i]) + " before " + std::to_string(next);
    if (group[i] == next) ++next;
  }
  // Convex: from each node of a subgraph, no path that leaves it comes back.
  for (size_t i = 0; i < n; ++i) {
    if (group[i] < 0) continue;
    std::vector<bool> seen(n, false);
    std::vector<size_t> stack;
    for (size_t c : consumers[i]) {
      if (group[c] != group[i]) stack.push_back(c);
    }
    while (!stack.empty()) {
      const size_t u = stack.back();
      stack.pop_back();
      if (seen[u]) continue;
      seen[u] = true;
      if (group[u] == group[i]) {
        return "subgraph " + std::to_string(group[i]) + " holds " + nodes[i]->name() + " and " + nodes[u]->name() +
               " with nodes outside it between them";
      }
      for (size_t c : consumers[u]) stack.push_back(c);
    }
  }
  // Segments (a subgraph, or a CPU node) and the reachability between them.
  const size_t s = size_t(next) + n;
  auto segment = [&](size_t i) { return group[i] >= 0 ? size_t(group[i]) : size_t(next) + i; };
  std::vector<std::set<size_t>> succ(s);
  for (size_t i = 0; i < n; ++i) {
    for (size_t c : consumers[i]) {
      if (segment(c) != segment(i)) succ[segment(i)].insert(segment(c));
    }
  }
  std::vector<std::vector<bool>> reach(s, std::vector<bool>(s, false));
  for (size_t a = 0; a < s; ++a) {
    std::vector<size_t> stack(succ[a].begin(), succ[a].end());
    while (!stack.empty()) {
      const size_t u = stack.back();
      stack.pop_back();
      if (reach[a][u]) continue;
      reach[a][u] = true;
      stack.insert(stack.end(), succ[u].begin(), succ[u].end());
    }
    if (reach[a][a]) return "segments form a cycle through subgraph " + std::to_string(a);
  }
  std::map<const ir::Value*, std::set<size_t>> readers;  // values the BPU does not produce
  for (size_t i = 0; i < n; ++i) {
    if (group[i] < 0) continue;
    for (const ir::Value* in : nodes[i]->inputs()) {
      if (in == nullptr || in->is_constant() || (in->producer() != nullptr && bpu[index.at(in->producer())])) continue;
      readers[in].insert(size_t(group[i]));
    }
  }
  for (const auto& [value, groups] : readers) {
    for (size_t a : groups) {
      for (size_t b : groups) {
        if (a < b && !reach[a][b] && !reach[b][a]) {
          return "subgraphs " + std::to_string(a) + " and " + std::to_string(b) + " both read " + value->name() +
                 " and neither depends on the other";
        }
      }
    }
  }
  return "";
}

// 2000 random DAGs of 3 to 62 nodes (each reading 1 to 3 earlier values or graph inputs, half
// of them on the BPU): every grouping is valid by grouping_problem; a failure prints the seed,
// the marks and the graph.
TEST(Partitioner, RandomGraphsGiveConvexAcyclicSubgraphsWithNoIndependentSiblings) {
  int merged_siblings = 0;
  for (uint32_t seed = 1; seed <= 2000; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](size_t count) { return size_t(rng() % count); };
    ir::Model model;
    ir::Graph& g = *model.graph;
    std::vector<ir::Value*> values;
    const size_t inputs = 1 + pick(3), count = 3 + pick(60);
    for (size_t i = 0; i < inputs; ++i) {
      values.push_back(g.add_value("x" + std::to_string(i), TensorType::of(DataType::kFloat32, {1})));
      g.add_input(values.back());
    }
    std::vector<const ir::Node*> nodes;
    std::vector<bool> bpu;
    for (size_t i = 0; i < count; ++i) {
      std::vector<ir::Value*> in;
      for (size_t k = 1 + pick(3); k > 0; --k) {
        // Mostly recent values, so that chains form, sometimes any earlier one.
        const size_t back = pick(2) ? pick(std::min<size_t>(values.size(), 3)) : pick(values.size());
        in.push_back(values[values.size() - 1 - back]);
      }
      const std::string name = "n" + std::to_string(i);
      nodes.push_back(g.add_node({"Add", in, {name}, name, "", {}}));
      values.push_back(nodes.back()->output(0));
      bpu.push_back(pick(2) != 0);
    }
    const std::vector<int> group = group_subgraphs(nodes, bpu);
    std::string marks;
    for (size_t i = 0; i < count; ++i) marks += nodes[i]->name() + (bpu[i] ? "=BPU " : "=CPU ");
    EXPECT_EQ(grouping_problem(nodes, bpu, group), "") << "seed " << seed << ": " << marks << "\n" << ir::dump(g);
    // How often the sibling rule fired: subgraphs whose nodes their own edges do not connect.
    std::vector<size_t> root(count);
    for (size_t i = 0; i < count; ++i) root[i] = i;
    auto find = [&](size_t i) {
      while (root[i] != i) i = root[i];
      return i;
    };
    for (size_t i = 0; i < count; ++i) {
      for (const ir::Value* in : nodes[i]->inputs()) {
        const auto p = std::find(nodes.begin(), nodes.end(), in->producer());
        if (p != nodes.end() && group[size_t(p - nodes.begin())] == group[i] && group[i] >= 0) {
          root[find(size_t(p - nodes.begin()))] = find(i);
        }
      }
    }
    std::map<int, std::set<size_t>> parts;
    for (size_t i = 0; i < count; ++i) {
      if (group[i] >= 0) parts[group[i]].insert(find(i));
    }
    for (const auto& [sub, roots] : parts) merged_siblings += roots.size() > 1;
  }
  EXPECT_GT(merged_siblings, 1000) << merged_siblings;  // the cases exercise the rule
}

// ---------------------------------------------------------------- sibling subgraphs

TEST(Partitioner, SiblingBranchesOfAGraphInputAreOneSubgraph) {
  // x -> conv a -> relu -> output A, x -> conv b -> output B: neither branch depends on the
  // other, so one BPU function call runs both.
  const TextPartition t = partition_text(
      "graph g (%x: float32[1,4,8,8]) -> (%ra, %b) {\n"
      "  init %wa: float32[4,4,1,1]\n"
      "  init %wb: float32[4,4,1,1]\n"
      "  %a: float32[1,4,8,8] = Conv(%x, %wa)\n"
      "  %ra: float32[1,4,8,8] = Relu(%a)\n"
      "  %b: float32[1,4,8,8] = Conv(%x, %wb)\n"
      "}\n");
  EXPECT_EQ(t.placement(), "a=0 ra=0 b=0");
  EXPECT_EQ(t.part.subgraph_count, 1);
}

TEST(Partitioner, SiblingBranchesMeetingOnTheCpuAreOneSubgraphBeforeIt) {
  // x -> conv a, x -> conv b, both read by an Add forced to the CPU.
  const TextPartition t = partition_text(
      "graph g (%x: float32[1,4,8,8]) -> (%s) {\n"
      "  init %wa: float32[4,4,1,1]\n"
      "  init %wb: float32[4,4,1,1]\n"
      "  %a: float32[1,4,8,8] = Conv(%x, %wa)\n"
      "  %b: float32[1,4,8,8] = Conv(%x, %wb)\n"
      "  %s: float32[1,4,8,8] = Add(%a, %b)\n"
      "}\n",
      {"s"});
  EXPECT_EQ(t.placement(), "a=0 b=0 s=CPU");
  EXPECT_EQ(t.part.subgraph_count, 1);
}

TEST(Partitioner, SiblingBranchesOfACpuNodeAreOneSubgraph) {
  // Three convolutions read one CPU result; the third also reads the graph input.
  const TextPartition t = partition_text(
      "graph g (%x: float32[1,4,8,8]) -> (%a, %b, %c) {\n"
      "  init %wa: float32[4,4,1,1]\n"
      "  init %wb: float32[4,4,1,1]\n"
      "  init %wc: float32[4,4,1,1]\n"
      "  %e: float32[1,4,8,8] = Erf(%x)\n"
      "  %a: float32[1,4,8,8] = Conv(%e, %wa)\n"
      "  %b: float32[1,4,8,8] = Conv(%e, %wb)\n"
      "  %sum: float32[1,4,8,8] = Add(%e, %x)\n"
      "  %c: float32[1,4,8,8] = Conv(%sum, %wc)\n"
      "}\n",
      {"e"});
  EXPECT_EQ(t.placement(), "e=CPU a=0 b=0 sum=0 c=0");
  EXPECT_EQ(t.part.subgraph_count, 1);
}

TEST(Partitioner, SiblingsStaySeparateWhenOneReadsTheOtherThroughTheCpu) {
  // conv b's branch reads erf(conv a): running both in one call would need the CPU in the middle.
  const TextPartition t = partition_text(
      "graph g (%x: float32[1,4,8,8]) -> (%a, %s) {\n"
      "  init %wa: float32[4,4,1,1]\n"
      "  init %wb: float32[4,4,1,1]\n"
      "  %a: float32[1,4,8,8] = Conv(%x, %wa)\n"
      "  %e: float32[1,4,8,8] = Erf(%a)\n"
      "  %b: float32[1,4,8,8] = Conv(%x, %wb)\n"
      "  %s: float32[1,4,8,8] = Add(%b, %e)\n"
      "}\n",
      {"e"});
  EXPECT_EQ(t.placement(), "a=0 e=CPU b=1 s=1");
  EXPECT_EQ(t.part.subgraph_count, 2);
}

TEST(Partitioner, SiblingsStaySeparateWhenOneDependsOnTheOtherThroughAnotherSubgraph) {
  // a -> erf (CPU) -> conv m -> erf (CPU) -> add with conv b: b's subgraph depends on a's
  // through two CPU nodes and m's subgraph.
  const TextPartition t = partition_text(
      "graph g (%x: float32[1,4,8,8]) -> (%a, %s) {\n"
      "  init %wa: float32[4,4,1,1]\n"
      "  init %wb: float32[4,4,1,1]\n"
      "  init %wm: float32[4,4,1,1]\n"
      "  %a: float32[1,4,8,8] = Conv(%x, %wa)\n"
      "  %e: float32[1,4,8,8] = Erf(%a)\n"
      "  %m: float32[1,4,8,8] = Conv(%e, %wm)\n"
      "  %f: float32[1,4,8,8] = Erf(%m)\n"
      "  %b: float32[1,4,8,8] = Conv(%x, %wb)\n"
      "  %s: float32[1,4,8,8] = Add(%b, %f)\n"
      "}\n",
      {"e", "f"});
  EXPECT_EQ(t.placement(), "a=0 e=CPU m=1 f=CPU b=2 s=2");
  EXPECT_EQ(t.part.subgraph_count, 3);
}

TEST(Partitioner, SiblingsMergeOnlyAfterNodesHaveJoinedTheirProducers) {
  // a and b read x; d1 and d2 read b and, through CPU nodes, a. Joining b's subgraph first puts
  // d1 and d2 with b (2 subgraphs); merging a and b first would have left d1 and d2 each alone.
  const TextPartition t = partition_text(
      "graph g (%x: float32[1,4,8,8]) -> (%d1, %d2) {\n"
      "  init %wa: float32[4,4,1,1]\n"
      "  init %wb: float32[4,4,1,1]\n"
      "  %a: float32[1,4,8,8] = Conv(%x, %wa)\n"
      "  %b: float32[1,4,8,8] = Conv(%x, %wb)\n"
      "  %c1: float32[1,4,8,8] = Erf(%a)\n"
      "  %c2: float32[1,4,8,8] = Erf(%a)\n"
      "  %d1: float32[1,4,8,8] = Add(%b, %c1)\n"
      "  %d2: float32[1,4,8,8] = Mul(%b, %c2)\n"
      "}\n",
      {"c1", "c2"});
  EXPECT_EQ(t.placement(), "a=0 b=1 c1=CPU c2=CPU d1=1 d2=1");
  EXPECT_EQ(t.part.subgraph_count, 2);
}

}  // namespace
}  // namespace openbpu::bpu_support

namespace openbpu::bpu_support {
namespace {

TEST(OpSupportTable, DocsAreGeneratedFromTheTable) {
  const std::string path = std::string(OPENBPU_SOURCE_DIR) + "/docs/supported_ops.md";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string want = supported_ops_markdown();
  const std::string have = text.str();
  size_t line = 1, i = 0;
  while (i < want.size() && i < have.size() && want[i] == have[i]) line += want[i++] == '\n';
  EXPECT_TRUE(have == want) << path << " is stale from line " << line << ": regenerate it with "
                            << "build/release/toolchain/cli/hb_mapper supported-ops > docs/supported_ops.md";
}

}  // namespace
}  // namespace openbpu::bpu_support

namespace openbpu::bpu_support {
namespace {

// The BPU operators of the reference's tables (../shared/reference/horizon-toolchain-facts.md
// §7.1 X3, §7.2 Ultra / X5): each must have a row or an optimizer form (docs/supported_ops.md
// lists both), except the ones still to build, which are named below and must leave that list
// once they arrive.
TEST(OpSupportTable, EveryReferenceBpuOperatorIsOurs) {
  const std::vector<std::string_view> x3 = {
      "Conv", "ConvTranspose", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
      "Add", "Sum", "Mul", "Div", "Concat", "Split", "Slice", "Resize", "Upsample", "Sigmoid", "Tanh", "Sin", "Cos",
      "Sqrt", "Softplus", "Relu", "LeakyRelu", "PRelu", "Clip", "Exp", "Reciprocal", "BatchNormalization", "ArgMax",
      "ReduceMean", "Pad", "Pow", "DepthToSpace", "SpaceToDepth", "LSTM", "Softmax", "Dropout", "Constant",
      "ConstantOfShape", "Shape", "Size"};
  const std::vector<std::string_view> bayes = {
      "Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Add", "Sub", "Mul",
      "Max", "Min", "Equal", "Greater", "Less", "Abs", "Atan", "Ceil", "Floor", "Clip", "Cos", "Elu", "Exp",
      "HardSigmoid", "LeakyRelu", "Log", "Relu", "Sigmoid", "Tanh", "Pow", "Concat", "MatMul", "Gather",
      "GatherElements", "Expand", "Softmax", "ArgMax", "ArgMin", "LSTM", "Flatten", "Reshape", "DepthToSpace"};
  // Not yet on our BPU (they run on the CPU in float): the comparisons and GatherElements.
  auto ours = [](std::string_view op) {
    if (find_op_def(op) != nullptr) return true;
    for (const OptimizerForm& f : optimizer_forms()) {
      if (f.op_type == op) return true;
    }
    return false;
  };
  for (const auto* table : {&x3, &bayes}) {
    for (std::string_view op : *table) {
      EXPECT_TRUE(ours(op)) << op << " is a BPU operator of the reference and has no row or optimizer form";
    }
  }
  const std::string doc = supported_ops_markdown();
  for (const OptimizerForm& f : optimizer_forms()) {
    EXPECT_NE(doc.find("| " + std::string(f.op_type) + " | "), std::string::npos) << f.op_type;
  }
}

}  // namespace
}  // namespace openbpu::bpu_support
