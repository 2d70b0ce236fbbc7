// if_inlining: an If with a constant condition becomes the branch it takes (nested Ifs too).
// control_flow_flattening: an If with a computed condition becomes both branches and Wheres; a
// Loop with a constant trip count is unrolled.
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

Tensor bool_scalar(bool value) {
  Tensor t(DataType::kBool, {});
  t.data<bool>()[0] = value;
  return t;
}

// Runs `m` on x (pseudo-random) and the given extra feeds; the first output.
Tensor run_first_output(const ir::Model& m, std::map<std::string, Tensor> feeds) {
  feeds["x"] = testing::pseudo_random_input(*m.graph->find_value("x"), 7);
  executor::FloatExecutor exec(m);
  return exec.run(feeds).tensors.front();
}

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.element_count(); ++i) EXPECT_FLOAT_EQ(a.float_at(i), b.float_at(i)) << i;
}

TEST(ControlFlowFlattening, AComputedConditionSelectsBetweenBothBranchesNestedIfsToo) {
  ir::Model m = model(nullptr, false, false);
  const auto reports = run_passes(m, {{"control_flow_flattening", {}}});
  EXPECT_EQ(reports.front().rewrites, 2);
  EXPECT_EQ(ir::dump(*m.graph),
            "graph g (%x: float32[2,3], %c: bool[]) -> (%y) {\n"
            "  %a = Abs(%x)\n"
            "  %r = Relu(%a)\n"
            "  %s = Sigmoid(%a)\n"
            "  %t = Where(%c, %r, %s)\n"
            "  %n = Neg(%a)\n"
            "  %b = Where(%c, %t, %n)\n"
            "  %y = Neg(%b)\n"
            "}\n");
  EXPECT_NE(m.graph->find_value("b")->producer(), nullptr);
  EXPECT_EQ(m.graph->find_value("b")->producer()->name(), "outer_if");  // node settings naming the If apply
  // The flattened graph computes what the original (the executor runs its Ifs) and the branch
  // the condition takes compute.
  const ir::Model original = model(nullptr, false, false);
  for (const bool flag : {true, false}) {
    ir::Model taken = model(nullptr, true, flag);
    run_passes(taken, {{"if_inlining", {}}});
    const Tensor flattened = run_first_output(m, {{"c", bool_scalar(flag)}});
    expect_same(flattened, run_first_output(taken, {}));
    expect_same(flattened, run_first_output(original, {{"c", bool_scalar(flag)}}));
  }
}

// h0 → Loop(M = 3){ h' = h·2 + Gather(x, i); scan out h' } → (h_final, hs [3, 3])
ir::Model loop_model(ir::Value** trips_out, bool early_exit) {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  g.set_name("g");
  const auto f3 = ir::TensorType::of(DataType::kFloat32, {3});
  ir::Value* x = g.add_value("x", ir::TensorType::of(DataType::kFloat32, {4, 3}));
  g.add_input(x);
  ir::Value* h0 = g.add_value("h0", f3);
  g.add_input(h0);
  auto body = std::make_shared<ir::Graph>();
  body->set_name("body");
  ir::Value* i = body->add_value("i", ir::TensorType::of(DataType::kInt64, {}));
  ir::Value* cond = body->add_value("cond", ir::TensorType::of(DataType::kBool, {}));
  ir::Value* h = body->add_value("h", f3);
  for (ir::Value* v : {i, cond, h}) body->add_input(v);
  ir::Node* row = body->add_node({"Gather", {body->add_outer_scope_value("x"), i}, {"row"}, "gather", "", {}});
  row->output(0)->set_type(f3);
  ir::Node* twice = body->add_node({"Mul", {h, body->add_constant("two", Tensor::scalar<float>(2))}, {"twice"}, "mul", "", {}});
  twice->output(0)->set_type(f3);
  ir::Node* next = body->add_node({"Add", {twice->output(0), row->output(0)}, {"next"}, "add", "", {}});
  next->output(0)->set_type(f3);
  ir::Node* go = body->add_node({"Identity", {cond}, {"go"}, "go", "", {}});
  if (early_exit) {  // go on while max(h') < 10
    kernels::AttributeMap flat;
    flat.set("keepdims", int64_t{0});
    ir::Node* big = body->add_node({"ReduceMax", {next->output(0)}, {"big"}, "max", "", flat});
    big->output(0)->set_type(ir::TensorType::of(DataType::kFloat32, {}));
    go = body->add_node({"Less", {big->output(0), body->add_constant("ten", Tensor::scalar<float>(10))}, {"below"}, "test", "", {}});
  }
  go->output(0)->set_type(ir::TensorType::of(DataType::kBool, {}));
  ir::Node* copy = body->add_node({"Identity", {next->output(0)}, {"scan"}, "scan", "", {}});
  copy->output(0)->set_type(f3);
  for (ir::Value* v : {go->output(0), next->output(0), copy->output(0)}) body->add_output(v);
  ir::Value* trips = g.add_constant("trips", Tensor::scalar<int64_t>(3));
  if (trips_out != nullptr) *trips_out = trips;
  ir::Node* loop = g.add_node({"Loop", {trips, g.add_constant("yes", bool_scalar(true)), h0}, {"h_final", "hs"}, "loop", "", {}});
  loop->graph_attrs().push_back({"body", {body}, false});
  loop->output(0)->set_type(f3);
  loop->output(1)->set_type(ir::TensorType::of(DataType::kFloat32, {3, 3}));
  g.add_output(loop->output(0));
  g.add_output(loop->output(1));
  return m;
}

TEST(ControlFlowFlattening, AConstantTripCountLoopIsUnrolled) {
  ir::Model m = loop_model(nullptr, false);
  const auto reports = run_passes(m, {{"control_flow_flattening", {}}});
  EXPECT_EQ(reports.front().rewrites, 1);
  const std::string dump = ir::dump(*m.graph);
  EXPECT_EQ(dump.find("Loop"), std::string::npos) << dump;
  // Each iteration's copy reads the previous one's; the last one's result takes the Loop output's
  // name; the body's condition copies go (nothing reads them).
  EXPECT_NE(dump.find("%twice@1 = Mul(%next@0, %two@1)"), std::string::npos) << dump;
  EXPECT_NE(dump.find("%h_final = Add(%twice@2, %row@2)"), std::string::npos) << dump;
  EXPECT_NE(dump.find("%hs = Concat[axis=0](%scan@0.stacked, %scan@1.stacked, %scan@2.stacked)"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("%go@"), std::string::npos) << dump;
  std::map<std::string, Tensor> feeds{{"x", testing::pseudo_random_input(*m.graph->find_value("x"), 3)},
                                      {"h0", testing::pseudo_random_input(*m.graph->find_value("h0"), 4)}};
  executor::FloatExecutor exec(m);
  const auto result = exec.run(feeds);
  const ir::Model original = loop_model(nullptr, false);  // the executor runs the Loop
  const auto looped = executor::FloatExecutor(original).run(feeds);
  for (const char* name : {"h_final", "hs"}) expect_same(result.at(name), looped.at(name));
  std::vector<float> h(feeds["h0"].data<float>(), feeds["h0"].data<float>() + 3);
  for (int it = 0; it < 3; ++it) {
    for (int k = 0; k < 3; ++k) {
      h[k] = h[k] * 2 + feeds["x"].data<float>()[it * 3 + k];
      EXPECT_FLOAT_EQ(result.at("hs").data<float>()[it * 3 + k], h[k]);
    }
  }
  for (int k = 0; k < 3; ++k) EXPECT_FLOAT_EQ(result.at("h_final").data<float>()[k], h[k]);
}

// What control_flow_flattening leaves runs in the float executor: a trip count fed as data, a
// body that ends the loop early.
TEST(ControlFlowFlattening, TheExecutorRunsTheLoopsThatStay) {
  for (const bool early_exit : {false, true}) {
    SCOPED_TRACE(early_exit ? "early exit" : "data trip count");
    ir::Value* trips = nullptr;
    ir::Model m = loop_model(&trips, early_exit);
    trips->clear_constant();
    m.graph->add_input(trips);
    m.graph->outputs()[1]->set_type(ir::TensorType::of(DataType::kFloat32, {}));  // trips unknown
    std::map<std::string, Tensor> feeds{{"x", testing::pseudo_random_input(*m.graph->find_value("x"), 3)},
                                        {"h0", Tensor::from_values<float>({3}, std::vector<float>{1, 2, 3})},
                                        {"trips", Tensor::scalar<int64_t>(4)}};
    const auto result = executor::FloatExecutor(m).run(feeds);
    std::vector<float> h{1, 2, 3};
    int iterations = 0;
    for (bool going = true; going && iterations < 4; ++iterations) {
      for (int k = 0; k < 3; ++k) h[k] = h[k] * 2 + feeds["x"].data<float>()[iterations * 3 + k];
      going = !early_exit || *std::max_element(h.begin(), h.end()) < 10;
    }
    EXPECT_EQ(result.at("hs").shape(), (kernels::Shape{iterations, 3}));
    for (int k = 0; k < 3; ++k) EXPECT_FLOAT_EQ(result.at("h_final").data<float>()[k], h[k]);
  }
}

TEST(ControlFlowFlattening, MustNotFire) {
  {  // Branch outputs of different shapes.
    ir::Model m = model(nullptr, false, false);
    for (ir::Node* n : m.graph->nodes()) {
      if (n->name() == "outer_if") {
        n->graph_attrs()[1].graphs[0]->outputs()[0]->set_type(ir::TensorType::of(DataType::kFloat32, {3, 2}));
      }
    }
    const std::string before = ir::dump(*m.graph);
    std::vector<std::string> lines;
    PipelineOptions options;
    options.log = [&](const std::string& line) { lines.push_back(line); };
    EXPECT_EQ(run_passes(m, {{"control_flow_flattening", {}}}, options).front().rewrites, 0);
    EXPECT_EQ(ir::dump(*m.graph), before);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("If 'outer_if' stays (it runs on the CPU): output 0 is float32[2,3] in then_branch and "
                            "float32[3,2] in else_branch"),
              std::string::npos)
        << lines[0];
  }
  {  // An If the option `keep` names (run_on_cpu): it stays, once in the log.
    ir::Model m = model(nullptr, false, false);
    const std::string before = ir::dump(*m.graph);
    std::vector<std::string> lines;
    PipelineOptions options;
    options.log = [&](const std::string& line) { lines.push_back(line); };
    EXPECT_EQ(run_passes(m, {{"control_flow_flattening", {{"keep", "other;outer_if"}}}}, options).front().rewrites, 0);
    EXPECT_EQ(ir::dump(*m.graph), before);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("If 'outer_if' stays (it runs on the CPU): run_on_cpu names it"), std::string::npos) << lines[0];
  }
  {  // A data trip count, an early exit.
    for (const bool early_exit : {false, true}) {
      ir::Value* trips = nullptr;
      ir::Model m = loop_model(&trips, early_exit);
      if (!early_exit) {
        trips->clear_constant();
        m.graph->add_input(trips);
      }
      const std::string before = ir::dump(*m.graph);
      EXPECT_EQ(run_passes(m, {{"control_flow_flattening", {}}}).front().rewrites, 0);
      EXPECT_EQ(ir::dump(*m.graph), before);
    }
  }
}

}  // namespace
}  // namespace openbpu::passes
