// if_inlining: an If with a constant condition becomes the branch it takes (nested Ifs too).
#include "pass_test_support.h"

namespace openbpu::passes {
namespace {

using kernels::DataType;
using kernels::Tensor;

// A branch graph reading outer value `from` through `op` into an output named `out`.
std::shared_ptr<ir::Graph> branch(const std::string& op, const std::string& from, const std::string& out) {
  auto g = std::make_shared<ir::Graph>();
  g->set_name(out + "_graph");
  ir::Value* x = g->add_outer_scope_value(from);
  ir::Node* n = g->add_node({op, {x}, {out}, out + "_node", "", {}});
  n->output(0)->set_type(ir::TensorType::of(DataType::kFloat32, {2, 3}));
  g->add_output(n->output(0));
  return g;
}

// x → Abs (a) → If(cond){then: If(cond){Relu(a)} else {Sigmoid(a)}} else {Neg(a)} → Neg → y
ir::Model model(const ir::Value** cond_out, bool constant_condition, bool flag) {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  g.set_name("g");
  ir::Value* x = g.add_value("x", ir::TensorType::of(DataType::kFloat32, {2, 3}));
  g.add_input(x);
  Tensor flag_tensor(DataType::kBool, {});
  flag_tensor.data<bool>()[0] = flag;
  ir::Value* c = constant_condition ? g.add_constant("c", flag_tensor)
                                    : g.add_value("c", ir::TensorType::of(DataType::kBool, {}));
  if (!constant_condition) g.add_input(c);
  ir::Node* abs = g.add_node({"Abs", {x}, {"a"}, "abs", "", {}});
  abs->output(0)->set_type(x->type());
  auto inner_then = std::make_shared<ir::Graph>();
  inner_then->set_name("inner");
  ir::Value* ic = inner_then->add_outer_scope_value("c");
  ir::Node* inner = inner_then->add_node({"If", {ic}, {"t"}, "inner_if", "", {}});
  inner->graph_attrs().push_back({"then_branch", {branch("Relu", "a", "r")}, false});
  inner->graph_attrs().push_back({"else_branch", {branch("Sigmoid", "a", "s")}, false});
  inner->output(0)->set_type(x->type());
  inner_then->add_output(inner->output(0));
  ir::Node* outer = g.add_node({"If", {c}, {"b"}, "outer_if", "", {}});
  outer->graph_attrs().push_back({"then_branch", {inner_then}, false});
  outer->graph_attrs().push_back({"else_branch", {branch("Neg", "a", "n")}, false});
  outer->output(0)->set_type(x->type());
  ir::Node* y = g.add_node({"Neg", {outer->output(0)}, {"y"}, "neg", "", {}});
  y->output(0)->set_type(x->type());
  g.add_output(y->output(0));
  if (cond_out != nullptr) *cond_out = c;
  return m;
}

TEST(IfInlining, AConstantConditionTakesItsBranchNestedIfsToo) {
  for (const bool flag : {true, false}) {
    SCOPED_TRACE(flag ? "true" : "false");
    ir::Model m = model(nullptr, true, flag);
    const auto reports = run_passes(m, {{"if_inlining", {}}});
    EXPECT_EQ(reports.front().rewrites, flag ? 2 : 1);
    // The condition, now unused, goes with the unused values after the pass; the If's output
    // keeps its name.
    EXPECT_EQ(ir::dump(*m.graph), std::string("graph g (%x: float32[2,3]) -> (%y) {\n  %a = Abs(%x)\n") +
                                      (flag ? "  %b = Relu(%a)\n  %y = Neg(%b)\n" : "  %b = Neg(%a)\n  %y = Neg(%b)\n") +
                                      "}\n");
  }
}

// x → Abs (a) → If(true){Relu(a)} else {Neg(a)} (b) → If(Size(b) > 4){Sigmoid(b)} else {Neg(b)} (z)
// → Neg → y: the second condition is a shape test on the first If's output, and its branches
// read that output by name.
TEST(IfInlining, AShapeTestOnAnInlinedValueFoldsAndTheNameItReadsSurvives) {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  g.set_name("g");
  const auto f23 = ir::TensorType::of(DataType::kFloat32, {2, 3});
  ir::Value* x = g.add_value("x", f23);
  g.add_input(x);
  Tensor yes(DataType::kBool, {});
  yes.data<bool>()[0] = true;
  ir::Node* abs = g.add_node({"Abs", {x}, {"a"}, "abs", "", {}});
  abs->output(0)->set_type(f23);
  ir::Node* first = g.add_node({"If", {g.add_constant("c", yes)}, {"b"}, "first_if", "", {}});
  first->graph_attrs().push_back({"then_branch", {branch("Relu", "a", "r")}, false});
  first->graph_attrs().push_back({"else_branch", {branch("Neg", "a", "n")}, false});
  first->output(0)->set_type(f23);
  ir::Node* size = g.add_node({"Size", {first->output(0)}, {"size"}, "size", "", {}});
  size->output(0)->set_type(ir::TensorType::of(DataType::kInt64, {}));
  ir::Node* test = g.add_node({"Greater", {size->output(0), g.add_constant("four", Tensor::scalar<int64_t>(4))},
                               {"k"}, "test", "", {}});
  test->output(0)->set_type(ir::TensorType::of(DataType::kBool, {}));
  ir::Node* second = g.add_node({"If", {test->output(0)}, {"z"}, "second_if", "", {}});
  second->graph_attrs().push_back({"then_branch", {branch("Sigmoid", "b", "s")}, false});
  second->graph_attrs().push_back({"else_branch", {branch("Neg", "b", "m")}, false});
  second->output(0)->set_type(f23);
  ir::Node* y = g.add_node({"Neg", {second->output(0)}, {"y"}, "neg", "", {}});
  y->output(0)->set_type(f23);
  g.add_output(y->output(0));
  const auto reports = run_passes(m, {{"if_inlining", {}}});
  EXPECT_EQ(reports.front().rewrites, 2);
  EXPECT_EQ(ir::dump(*m.graph),
            "graph g (%x: float32[2,3]) -> (%y) {\n"
            "  %a = Abs(%x)\n"
            "  %b = Relu(%a)\n"
            "  %z = Sigmoid(%b)\n"
            "  %y = Neg(%z)\n"
            "}\n");
}

TEST(IfInlining, MustNotFire) {
  // A computed condition: the If stays with its branches.
  ir::Model m = model(nullptr, false, false);
  const std::string before = ir::dump(*m.graph);
  const auto reports = run_passes(m, {{"if_inlining", {}}});
  EXPECT_EQ(reports.front().rewrites, 0);
  EXPECT_EQ(ir::dump(*m.graph), before);
}

}  // namespace
}  // namespace openbpu::passes
